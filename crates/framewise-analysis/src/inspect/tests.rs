use super::*;
use crate::model::SourceKind;

#[test]
fn kind_specific_fields_sit_beside_the_common_ones() {
    let i = Inspection {
        schema: INSPECT_SCHEMA.into(),
        file: "x.litecap".into(),
        kind: SourceKind::Litecap,
        bytes: 10,
        source_version: Some(4),
        frames: FrameSummary::default(),
        detail: Detail::Imported(ImportedDetail {
            clock_measured: true,
            threads: vec![],
            phases: vec![],
            scopes: vec![ScopeEntry {
                name: "update".into(),
                site: None,
            }],
            passes: vec![],
            counters: vec![],
            marks: vec![],
            notes: vec![],
        }),
        defects: vec![],
    };
    let v = serde_json::to_value(&i).expect("serializes");
    assert_eq!(v["clock_measured"], true);
    assert_eq!(v["scopes"][0]["site"], serde_json::Value::Null);
    assert!(v.get("detail").is_none());
    let back: Inspection = serde_json::from_value(v).expect("parses");
    assert_eq!(back, i);
}
