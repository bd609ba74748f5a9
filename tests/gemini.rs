//! Gemini (Google Takeout My Activity): the SDK sample and the generated multi-product Takeout
//! convert with counts checked by an independent script; detection among other products,
//! newest-first reversal, grouping by conversation URL or time gap, drafts, activity records,
//! localized verbs and answer HTML on synthetic records.

use memport::pipeline::DedupPolicy;
use memport::sources::BranchPolicy;
use serde_json::json;

use crate::util::{assert_zip_converts_like_unpacked, convert_checked, ndjson, root, shared, skips};

fn activity_skips(report: &memport::pipeline::report::RunReport) -> u64 {
    report.counts.messages_skipped["activity"]
}

#[test]
fn sdk_sample_of_the_2024_request_response_variant() {
    // Three records with `details` Request/Response pairs (or `userInteractions`), grouped by
    // the conversation URL into two conversations: six messages, all written.
    let (_out, report) = convert_checked(
        &shared("pam/fixtures/python-sdk-test-samples/gemini-MyActivity.sample.json"),
        BranchPolicy::Active,
        DedupPolicy::Content,
    );
    assert_eq!(report.inputs[0].provider, "gemini");
    assert_eq!((report.counts.conversations_read, report.counts.messages_read, report.counts.messages_written), (2, 6, 6));
    assert_eq!(report.warnings.get("gemini_request_response_variant"), Some(&3));
}

#[test]
fn generated_takeout_is_found_among_other_products_and_matches_independent_counts() {
    // A Takeout with YouTube and Chrome activity beside Gemini's: only the Gemini file is read.
    // Counted by a separate script: 37 records (34 prompts, 3 activity), 24 conversations (8 by
    // URL, 16 by time gap), 2 extra drafts. Two policies differ from the script's: the
    // image-only prompt is kept (it carries the image's name), and a feedback record right after
    // a conversation's answer joins that conversation instead of standing alone (23, not 24).
    let (_out, report) = convert_checked(&root().join("examples/gemini-json-small"), BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.inputs[0].files, ["Takeout/My Activity/Gemini Apps/MyActivity.json"]);
    let counts = &report.counts;
    assert_eq!((counts.conversations_read, counts.messages_read, counts.messages_written), (23, 70, 65));
    assert_eq!((skips(&report), activity_skips(&report)), ((0, 2, 0), 3));
    let (_out, report) = convert_checked(&root().join("examples/gemini-json-small"), BranchPolicy::All, DedupPolicy::Content);
    assert_eq!(report.counts.messages_written, 67);
}

#[test]
fn a_zipped_takeout_gives_the_same_output_as_the_unpacked_one() {
    // Records of an unpacked activity file are read back from the file itself; a zip entry's
    // are copied to a spill first. Both paths must write the same bytes.
    let name = "Takeout/My Activity/Gemini Apps/MyActivity.json";
    assert_zip_converts_like_unpacked(&root().join("examples/gemini-json-small"), name);
}

fn record(title: &str, time: &str, answers: &[&str], conversation: Option<&str>) -> serde_json::Value {
    let mut record = json!({"header": "Gemini Apps", "title": title, "time": time, "products": ["Gemini Apps"],
                            "activityControls": ["Gemini Apps Activity"],
                            "safeHtmlItem": answers.iter().map(|html| json!({"html": html})).collect::<Vec<_>>()});
    if let Some(id) = conversation {
        record["details"] = json!([{"name": "Conversation", "url": format!("https://gemini.google.com/app/{id}")}]);
    }
    record
}

#[test]
fn records_are_reversed_grouped_and_rendered() {
    // Newest first, as Takeout writes them.
    let records = json!([
        record("Prompted Und noch?", "2026-03-01T12:00:30.000Z", &["<p>Mehr.</p>"], Some("abc123")),
        record("Gave feedback: Good response", "2026-03-01T12:00:20.000Z", &[], None),
        record(
            "Eingegebener Prompt: Was ist Rust?",
            "2026-03-01T12:00:00.000Z",
            &["<p>Eine <b>Sprache</b> &amp; mehr:</p><ul><li>schnell</li><li>sicher</li></ul>", "<p>Draft two</p>"],
            Some("abc123")
        ),
        record("Prompted Later", "2026-02-01T10:00:00.000Z", &["<p>Yes</p>"], None),
        record("Prompted Hello", "2026-02-01T08:00:00.000Z", &["<p>Hi!</p>"], None),
    ]);
    let folder = tempfile::tempdir().unwrap();
    let activity = folder.path().join("Takeout/Meine Aktivitäten/Gemini-Apps");
    std::fs::create_dir_all(&activity).unwrap();
    std::fs::write(activity.join("MeineAktivitäten.json"), serde_json::to_vec(&records).unwrap()).unwrap();
    let (out, report) = convert_checked(folder.path(), BranchPolicy::Active, DedupPolicy::Content);
    // abc123 (by URL), and two conversations by time gap (08:00 and 10:00 are two hours apart).
    assert_eq!(report.counts.conversations_read, 3);
    assert_eq!((report.counts.messages_read, report.counts.messages_written), (10, 8));
    assert_eq!((skips(&report).1, activity_skips(&report)), (1, 1));
    let contents: Vec<String> = ndjson(&out.path().join("memory.aimem.ndjson"))
        .into_iter()
        .filter(|line| line["_kind"] == "chunk")
        .map(|chunk| chunk["content"].as_str().unwrap().to_owned())
        .collect();
    // Out of the file's order: the oldest conversation comes first.
    assert_eq!(contents[0], "Hello");
    assert_eq!(contents[4], "Was ist Rust?");
    assert_eq!(contents[5], "Eine **Sprache** & mehr:\n\n- schnell\n- sicher");
    assert_eq!(contents[6], "Und noch?");
}

#[test]
fn html_activity_page_in_czech_is_read() {
    // The HTML layout with a Czech verb (`Pokyn`) and local times in SEČ (UTC+1): two prompt
    // records 25 minutes apart, each with an answer: one conversation of four messages.
    let (out, report) =
        convert_checked(&shared("provider-samples/gemini/synthetic_html-structure"), BranchPolicy::Active, DedupPolicy::Content);
    assert!(report.inputs[0].layout.contains("HTML"), "{}", report.inputs[0].layout);
    assert_eq!((report.counts.conversations_read, report.counts.messages_read, report.counts.messages_written), (1, 4, 4));
    let chunks: Vec<_> = ndjson(&out.path().join("memory.aimem.ndjson")).into_iter().filter(|line| line["_kind"] == "chunk").collect();
    assert_eq!(chunks[0]["created_at"], "2026-01-01T09:00:00Z");
    assert!(chunks[3]["content"].as_str().unwrap().contains("- First bullet"), "{}", chunks[3]["content"]);
}

#[test]
fn an_html_takeout_reads_gemini_and_not_the_chrome_page_that_mentions_it() {
    let cell = |header: &str, body: &str| {
        format!(
            "<div class=\"outer-cell mdl-cell\"><div class=\"mdl-grid\"><div class=\"header-cell\"><p class=\"mdl-typography--title\">{header}<br></p></div>\
             <div class=\"content-cell mdl-cell mdl-cell--6-col mdl-typography--body-1\">{body}</div>\
             <div class=\"content-cell mdl-cell mdl-cell--6-col mdl-typography--body-1 mdl-typography--text-right\"></div>\
             <div class=\"content-cell mdl-cell mdl-cell--12-col mdl-typography--caption\"><b>Products:</b><br>&emsp;{header}<br></div></div></div>"
        )
    };
    let folder = tempfile::tempdir().unwrap();
    let chrome = folder.path().join("Takeout/My Activity/Chrome");
    let gemini = folder.path().join("Takeout/My Activity/Gemini Apps");
    std::fs::create_dir_all(&chrome).unwrap();
    std::fs::create_dir_all(&gemini).unwrap();
    let visit = cell("Chrome", "Visited&nbsp;<a href=\"https://gemini.google.com/app\">Gemini</a><br>Mar 1, 2026, 9:00:00 AM CET<br>");
    std::fs::write(chrome.join("MyActivity.html"), format!("<html><body>{visit}</body></html>")).unwrap();
    let prompt = cell("Gemini Apps", "Prompted&nbsp;Hi there<br>Mar 1, 2026, 9:05:00 AM CET<br><p>Hello!</p>");
    std::fs::write(gemini.join("MyActivity.html"), format!("<html><body>{prompt}</body></html>")).unwrap();
    let (out, report) = convert_checked(folder.path(), BranchPolicy::Active, DedupPolicy::Content);
    assert_eq!(report.inputs[0].files, ["Takeout/My Activity/Gemini Apps/MyActivity.html"]);
    assert_eq!(report.counts.messages_written, 2);
    let chunks: Vec<_> = ndjson(&out.path().join("memory.aimem.ndjson")).into_iter().filter(|line| line["_kind"] == "chunk").collect();
    assert_eq!(chunks[0]["created_at"], "2026-03-01T08:05:00Z");
    assert_eq!(chunks[1]["content"], "Hello!");
}

#[test]
fn a_broken_record_is_rejected_alone_and_a_cut_file_keeps_what_came_before() {
    // Newest first: a good record, one with an invalid escape in its answer (framed, keyed and
    // grouped like the others, then rejected by the decoder on its own), an older good record
    // of the same conversation, and a record cut off by the end of the file.
    let good_new = record("Prompted Second", "2026-03-01T12:05:00.000Z", &["<p>Two</p>"], Some("abc"));
    let good_old = record("Prompted First", "2026-03-01T12:00:00.000Z", &["<p>One</p>"], Some("abc"));
    let broken = r#"{"title":"Prompted Bad","time":"2026-03-01T12:02:00.000Z","details":[{"url":"https://gemini.google.com/app/abc"}],"safeHtmlItem":[{"html":"bad \q escape"}]}"#;
    let text = format!("[{good_new},\n{broken},\n{good_old},\n{{\"title\":\"Prompted cut");
    let broken_offset = text.find(broken).unwrap() as u64;
    let folder = tempfile::tempdir().unwrap();
    let activity = folder.path().join("Takeout/My Activity/Gemini Apps");
    std::fs::create_dir_all(&activity).unwrap();
    std::fs::write(activity.join("MyActivity.json"), &text).unwrap();
    let (out, report) = convert_checked(folder.path(), BranchPolicy::Active, DedupPolicy::Content);
    let counts = &report.counts;
    assert_eq!((counts.messages_written, counts.messages_rejected), (4, 2));
    let rejects = ndjson(&out.path().join("rejects.ndjson"));
    let broken_line = rejects.iter().find(|line| line["offset"] == broken_offset).expect("the broken record, by its byte offset");
    assert_eq!(broken_line["conversation_id"], "gm-abc");
    assert!(broken_line["reason"].as_str().unwrap().starts_with("activity record is not valid JSON"), "{broken_line}");
    let cut_line = rejects.iter().find(|line| line["reason"].as_str().unwrap().contains("the records before it were kept"));
    assert!(cut_line.is_some(), "{rejects:?}");
    // The conversation keeps its two good exchanges, oldest first.
    let contents: Vec<String> = ndjson(&out.path().join("memory.aimem.ndjson"))
        .into_iter()
        .filter(|line| line["_kind"] == "chunk")
        .map(|chunk| chunk["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(contents, ["First", "One", "Second", "Two"]);
}
