//! `/api/issues`: the catalogue of the `.framewise/` the capture sits in, folded as
//! `framewise issues` folds it, with this capture's own occurrences.

use framewise_incidents::fold::{CatalogueOptions, LedgerFiles, Occurrences};

use super::*;

#[path = "../common/ledger.rs"]
mod ledger;

/// The document without the one member that moves with the clock.
fn steady(mut doc: Value) -> Value {
    for issue in doc["issues"].as_array_mut().unwrap() {
        issue.as_object_mut().unwrap().remove("last_ago_ms");
    }
    doc
}

#[test]
fn the_catalogue_of_the_project_the_capture_sits_in() {
    let (project, capture) = ledger::project_around(demo());
    let app = app_found(&capture);
    let served = ok(&app, "/api/capture");
    let dir = project.path().join(".framewise");
    assert_eq!(served["issues"]["dir"], dir.display().to_string().as_str());

    let doc = ok(&app, "/api/issues");
    assert_eq!(doc["schema"], "framewise.issues/1");
    let session = load::open(&capture, &LoadOptions::new())
        .unwrap()
        .meta()
        .session
        .clone()
        .unwrap();
    let expected = LedgerFiles::read(&dir).unwrap().issues(&CatalogueOptions {
        occurrences: Occurrences::Session(session.clone()),
        ..CatalogueOptions::default()
    });
    assert_eq!(
        steady(doc.clone()),
        steady(serde_json::to_value(&expected).unwrap()),
        "the document `framewise issues` prints"
    );
    assert_eq!(doc["automated_left_out"], 1);
    // Every occurrence listed is this capture's, at a frame the capture has.
    let loaded = load::open(&capture, &LoadOptions::new()).unwrap();
    let hitches = find_hitches(&loaded, &HitchOptions::default()).hitches;
    let listed: Vec<&Value> = doc["issues"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["occurrences"].as_array().into_iter().flatten())
        .collect();
    assert_eq!(listed.len(), hitches.len());
    for o in listed {
        assert_eq!(o["session"], session.as_str());
        let frame = o["frame"].as_u64().unwrap();
        assert!(loaded.row_of_index(frame).is_some(), "frame {frame}");
    }
    // The other session's incident is counted, not listed.
    let other = doc["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["label"] == "hitch · pipeline-compile")
        .unwrap();
    assert!(other["count"].as_u64().unwrap() >= 1);
}

#[test]
fn no_project_no_catalogue() {
    // No project named (`app` serves none, whatever lies above the temp dir).
    let app = app(demo());
    assert!(ok(&app, "/api/capture").get("issues").is_none());
    let (status, json) = get(&app, "/api/issues");
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(json["error"].as_str().unwrap().contains("no .framewise/"));
    // A project can be named, or unnamed.
    let (project, capture) = ledger::project_around(demo());
    let inspector = Inspector::open(&capture, None).unwrap().with_project(None);
    let app = router(inspector, Token::from_string(TOKEN), None);
    assert_eq!(get(&app, "/api/issues").0, StatusCode::NOT_FOUND);
    let named = framewise_inspector::project_dir(project.path());
    assert_eq!(named, Some(project.path().join(".framewise")));
    let inspector = Inspector::open(demo(), None).unwrap().with_project(named);
    let app = router(inspector, Token::from_string(TOKEN), None);
    assert_eq!(get(&app, "/api/issues").0, StatusCode::OK);
}
