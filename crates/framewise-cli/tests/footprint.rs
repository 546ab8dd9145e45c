//! `framewise footprint KEY`: `{v, id, key}` by the one rule, and how the key reads.

use crate::support::Dir;

#[test]
fn footprint_prints_the_id_of_the_key() {
    let dir = Dir::new();
    // The id Node computes for this key by the reference's rule (framewise-detect's golden
    // vectors hold more).
    let key = "hitch|play|long-cpu-scope|section:physics|ctx:stance=foot,view=fp";
    let json = dir
        .run(&["footprint", key, "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(json["schema"], "framewise.footprint/1");
    assert_eq!(json["footprint"]["v"], 1);
    assert_eq!(json["footprint"]["id"], "6436b33c");
    assert_eq!(json["footprint"]["key"], key);
    assert_eq!(json["description"]["glyph"], "⚡");
    assert_eq!(
        json["description"]["label"],
        "hitch · long-cpu-scope · physics"
    );
    assert_eq!(json["description"]["phase"], "play");
    assert_eq!(json["description"]["situation"]["stance"], "foot");
    assert_eq!(json["description"]["situation"]["view"], "fp");

    let text = dir.run(&["footprint", key]).expect(0).stdout;
    assert!(text.starts_with("footprint 6436b33c (v1)\n"), "{text}");
    assert!(text.contains(&format!("  key        {key}\n")), "{text}");
}

#[test]
fn footprint_builds_the_situation_and_reads_non_ascii() {
    let dir = Dir::new();
    let built = dir
        .run(&[
            "footprint",
            "hitch|play|long-cpu-scope|section:physics",
            "--situation",
            "view=fp",
            "--situation",
            "stance=foot",
            "--format",
            "json",
        ])
        .expect(0)
        .json();
    assert_eq!(built["footprint"]["id"], "6436b33c");
    let astral = dir
        .run(&[
            "footprint",
            "hitch|play|gpu-bound|ctx:mood=🎮🔥,z=𝄞",
            "--json",
        ])
        .expect(0)
        .json();
    assert_eq!(astral["footprint"]["id"], "a313873b");
}

#[test]
fn footprint_rejects_bad_input_on_one_line() {
    let dir = Dir::new();
    // A blank key (a shell variable that held nothing but a space) is no key either.
    for key in ["", " ", "\t "] {
        let run = dir.run(&["footprint", key]).expect(4);
        assert!(
            run.one_error_line().contains("key is empty or blank"),
            "{key:?}: {}",
            run.stderr
        );
    }
    let run = dir
        .run(&["footprint", "k", "--situation", "novalue"])
        .expect(4);
    assert!(
        run.one_error_line().contains("NAME=VALUE"),
        "{}",
        run.stderr
    );
    // A facet named twice: which value was meant? Not the last one, silently (that would
    // print the id of `view=tp` for a command line that also says `view=fp`).
    let run = dir
        .run(&[
            "footprint",
            "k",
            "--situation",
            "view=fp",
            "--situation",
            "view=tp",
        ])
        .expect(4);
    assert_eq!(
        run.one_error_line(),
        "framewise: error: --situation view= is given twice: which value was meant? give each name once"
    );
    assert!(run.stdout.is_empty());
    dir.run(&["footprint"]).expect(4).one_error_line();
}

/// Names are compared and sorted as the key writes them (cleaned): `a b` and `a_b` are one
/// facet, refused as a name given twice (it printed `ctx:a_b=1,a_b=2`, exit 0), and `a b`
/// sorts as `a_b`, after `a_a` (it printed `ctx:a_b=1,a_a=2`).
#[test]
fn footprint_compares_and_sorts_situation_names_as_cleaned() {
    let dir = Dir::new();
    let run = dir
        .run(&[
            "footprint",
            "x",
            "--situation",
            "a b=1",
            "--situation",
            "a_b=2",
        ])
        .expect(4);
    assert_eq!(
        run.one_error_line(),
        "framewise: error: --situation names \"a b\" and \"a_b\" are one facet, a_b (in a name, \
         runs of `|`, `,`, `=` and whitespace become `_`): give each name once"
    );
    assert!(run.stdout.is_empty());
    let built = dir
        .run(&[
            "footprint",
            "x",
            "--situation",
            "a b=1",
            "--situation",
            "a_a=2",
            "--json",
        ])
        .expect(0)
        .json();
    assert_eq!(built["footprint"]["key"], "x|ctx:a_a=2,a_b=1");
}
