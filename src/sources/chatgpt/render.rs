//! Turns a ChatGPT `content` object into typed parts and the text that text-only formats carry.
//!
//! Every `content_type` of provider-formats.md §1.6 has a rendering; an unknown one is kept as a
//! raw part (filled in by the decoder from the element's JSON) and counted as a warning.

use crate::model::{Asset, AssetKind, MemoryKind, Part, Warnings};
use crate::sources::chatgpt::assets::AssetIndex;
use crate::sources::chatgpt::raw::{RawContent, RawContentReference, RawPart, RawPartObject};
use crate::sources::lenient::Object;

/// A message's content after rendering.
#[derive(Debug, Default)]
pub struct Rendered {
    /// Typed parts in order.
    pub parts: Vec<Part>,
    /// Reasoning rather than an answer.
    pub is_thought: bool,
    /// Context the provider injected (custom instructions, saved-memory snapshots), by kind.
    pub contexts: Vec<(MemoryKind, String)>,
    /// Set when the content type is unknown; the decoder fills the raw JSON in.
    pub unknown_type: Option<String>,
}

/// Renders `content` with `content_type` (already known to be present).
pub fn render(content_type: &str, content: &RawContent, assets: &AssetIndex, warnings: &mut Warnings) -> Rendered {
    let mut rendered = Rendered::default();
    let push_text = |parts: &mut Vec<Part>, text: Option<&str>| {
        if let Some(text) = text.filter(|text| !text.is_empty()) {
            parts.push(Part::Text(text.to_owned()));
        }
    };
    match content_type {
        "text" | "multimodal_text" => {
            if let Some(parts) = &content.parts {
                for part in &parts.0 {
                    match part {
                        RawPart::Text(text) => push_text(&mut rendered.parts, Some(text)),
                        RawPart::Object(object) => render_part_object(object, assets, warnings, &mut rendered.parts),
                        RawPart::Other => {}
                    }
                }
            }
        }
        "code" => {
            if let Some(text) = content.text.as_deref().filter(|text| !text.trim().is_empty()) {
                let language = content.language.as_deref().unwrap_or("unknown").to_owned();
                rendered.parts.push(Part::Code { language, text: text.to_owned() });
            }
        }
        "execution_output" => push_text(&mut rendered.parts, content.text.as_deref()),
        "system_error" => {
            let text = join_nonempty(&[content.name.as_deref(), content.text.as_deref()], ": ");
            push_text(&mut rendered.parts, Some(&text));
        }
        "tether_browsing_display" => {
            push_text(&mut rendered.parts, content.result.as_deref().or(content.summary.as_deref()));
        }
        "tether_quote" | "sonic_webpage" => {
            let body = content.text.as_deref().or(content.snippet.as_deref());
            let text = join_nonempty(&[content.title.as_deref(), content.url.as_deref(), body], "\n");
            push_text(&mut rendered.parts, Some(&text));
        }
        "thoughts" => {
            rendered.is_thought = true;
            if let Some(thoughts) = &content.thoughts {
                let pieces: Vec<String> = thoughts
                    .0
                    .iter()
                    .filter_map(Object::as_ref)
                    .map(|thought| join_nonempty(&[thought.summary.as_deref(), thought.content.as_deref()], "\n"))
                    .filter(|piece| !piece.is_empty())
                    .collect();
                push_text(&mut rendered.parts, Some(&pieces.join("\n\n")));
            }
        }
        "reasoning_recap" => {
            rendered.is_thought = true;
            push_text(&mut rendered.parts, content.content.as_deref());
        }
        "user_editable_context" => {
            let text = join_nonempty(
                &[
                    content.user_instructions.as_deref().map(|text| text.trim()).filter(|text| !text.is_empty()),
                    content.user_profile.as_deref().map(|text| text.trim()).filter(|text| !text.is_empty()),
                ],
                "\n\n",
            );
            push_text(&mut rendered.parts, Some(&text));
            let instructions = content.user_instructions.as_deref().map(str::trim).filter(|text| !text.is_empty());
            let profile = content.user_profile.as_deref().map(str::trim).filter(|text| !text.is_empty());
            rendered.contexts.extend(instructions.map(|text| (MemoryKind::Preference, text.to_owned())));
            rendered.contexts.extend(profile.map(|text| (MemoryKind::Identity, text.to_owned())));
        }
        "model_editable_context" => {
            push_text(&mut rendered.parts, content.model_set_context.as_deref());
            let saved = content.model_set_context.as_deref().map(str::trim).filter(|text| !text.is_empty());
            rendered.contexts.extend(saved.map(|text| (MemoryKind::Fact, text.to_owned())));
        }
        "computer_output" => {
            if let Some(screenshot) = content.screenshot.as_ref() {
                render_part_object(screenshot, assets, warnings, &mut rendered.parts);
            }
        }
        other => {
            warnings.add(format!("unknown_content_type:{other}"));
            rendered.unknown_type = Some(other.to_owned());
        }
    }
    rendered
}

fn render_part_object(object: &RawPartObject, assets: &AssetIndex, warnings: &mut Warnings, parts: &mut Vec<Part>) {
    let part_type = object.content_type.as_deref().unwrap_or("");
    match part_type {
        "audio_transcription" => {
            if let Some(text) = object.text.as_deref().filter(|text| !text.is_empty()) {
                parts.push(Part::Text(text.to_owned()));
            }
        }
        "image_asset_pointer" => push_asset(AssetKind::Image, object.asset_pointer.as_deref(), assets, warnings, parts),
        "audio_asset_pointer" => push_asset(AssetKind::Audio, object.asset_pointer.as_deref(), assets, warnings, parts),
        "real_time_user_audio_video_asset_pointer" => {
            if let Some(audio) = object.audio_asset_pointer.as_ref() {
                push_asset(AssetKind::Audio, audio.asset_pointer.as_deref(), assets, warnings, parts);
            }
            if let Some(video) = object.video_container_asset_pointer.as_ref() {
                push_asset(AssetKind::Video, video.asset_pointer.as_deref(), assets, warnings, parts);
            }
        }
        _ => {
            if object.asset_pointer.is_some() {
                push_asset(AssetKind::File, object.asset_pointer.as_deref(), assets, warnings, parts);
            } else if let Some(text) = object.text.as_deref().filter(|text| !text.is_empty()) {
                parts.push(Part::Text(text.to_owned()));
            } else {
                warnings.add(format!("unknown_part_type:{part_type}"));
                parts.push(Part::Raw { content_type: part_type.to_owned(), json: String::new() });
            }
        }
    }
}

fn push_asset(kind: AssetKind, pointer: Option<&str>, assets: &AssetIndex, warnings: &mut Warnings, parts: &mut Vec<Part>) {
    let Some(pointer) = pointer.filter(|pointer| !pointer.is_empty()) else {
        return;
    };
    let found = assets.resolve(pointer);
    if found.is_none() {
        warnings.add("asset_missing");
    }
    let (resolved, name) = match found {
        Some(found) => (Some(found.entry.clone()), found.original_name.clone()),
        None => (None, None),
    };
    parts.push(Part::Asset(Asset { kind, pointer: pointer.to_owned(), resolved, name }));
}

fn join_nonempty(pieces: &[Option<&str>], separator: &str) -> String {
    let kept: Vec<&str> = pieces.iter().flatten().copied().filter(|piece| !piece.is_empty()).collect();
    kept.join(separator)
}

/// Renders parts as the text a chunk carries: prose as is, code fenced, assets as
/// `[image: name]` markers so an image-only message is not empty.
pub fn parts_to_text(parts: &[Part]) -> String {
    let mut text = String::new();
    for part in parts {
        if matches!(part, Part::Thinking(_)) {
            continue;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        match part {
            Part::Thinking(_) => {}
            Part::Text(prose) => text.push_str(prose),
            Part::Code { language, text: code } => {
                text.push_str("```");
                if language != "unknown" {
                    text.push_str(language);
                }
                text.push('\n');
                text.push_str(code);
                if !code.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str("```");
            }
            Part::Asset(asset) => {
                text.push('[');
                text.push_str(asset.kind.as_str());
                text.push_str(": ");
                let label = asset.name.as_deref().or(asset.resolved.as_deref()).unwrap_or(&asset.pointer);
                text.push_str(label);
                if asset.resolved.is_none() {
                    text.push_str(" (missing from export)");
                }
                text.push(']');
            }
            Part::Raw { content_type, json } => {
                if json.is_empty() {
                    text.push('[');
                    text.push_str(content_type);
                    text.push(']');
                } else {
                    text.push_str(json);
                }
            }
        }
    }
    text
}

/// Replaces inline citation markers (`U+E200 … U+E201`, provider-formats.md §1.10.8) by the
/// reference's `alt` text when the message metadata has one, and drops them otherwise, along
/// with any stray private-use marker characters U+E200–U+E206.
pub fn resolve_citation_markers(text: &str, references: &[&RawContentReference]) -> Option<String> {
    let is_marker = |c: char| ('\u{e200}'..='\u{e206}').contains(&c);
    // The markers are U+E200–U+E206, all encoded as EE 88 80–86: a byte search finds them fast.
    if memchr::memmem::find(text.as_bytes(), b"\xEE\x88").is_none() || !text.contains(is_marker) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('\u{e200}') {
        out.extend(rest[..start].chars().filter(|c| !is_marker(*c)));
        let after_start = &rest[start..];
        match after_start.find('\u{e201}') {
            Some(end) => {
                let token = &after_start[..end + '\u{e201}'.len_utf8()];
                let replacement = references
                    .iter()
                    .find(|reference| reference.matched_text.as_deref() == Some(token))
                    .and_then(|reference| reference.alt.as_deref());
                if let Some(replacement) = replacement {
                    out.push_str(replacement);
                }
                rest = &after_start[token.len()..];
            }
            None => {
                rest = &after_start['\u{e200}'.len_utf8()..];
            }
        }
    }
    out.extend(rest.chars().filter(|c| !is_marker(*c)));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citation_markers_are_resolved_or_dropped() {
        let token = "\u{e200}cite\u{e202}turn0search1\u{e201}";
        let reference = RawContentReference { matched_text: Some(token.into()), alt: Some("[site](https://example.org)".into()) };
        let text = format!("Fact{token}. Other\u{e203}.");
        assert_eq!(resolve_citation_markers(&text, &[&reference]).unwrap(), "Fact[site](https://example.org). Other.");
        assert_eq!(resolve_citation_markers(&text, &[]).unwrap(), "Fact. Other.");
        assert_eq!(resolve_citation_markers("x\u{e200}unterminated", &[]).unwrap(), "xunterminated");
        assert_eq!(resolve_citation_markers("plain", &[]), None);
    }

    #[test]
    fn parts_render_code_fenced_and_assets_as_markers() {
        let parts = vec![
            Part::Text("see".into()),
            Part::Code { language: "python".into(), text: "print(1)".into() },
            Part::Asset(Asset { kind: AssetKind::Image, pointer: "file-service://file-x".into(), resolved: None, name: None }),
        ];
        assert_eq!(parts_to_text(&parts), "see\n```python\nprint(1)\n```\n[image: file-service://file-x (missing from export)]");
    }
}
