//! Serde model of a Takeout My Activity record of Gemini Apps, every field lenient. Both the
//! documented shape (`title` + `safeHtmlItem`) and the 2024 variant (`details` with
//! Request/Response values, `userInteractions`) read into it.
#![allow(missing_docs)]

use std::borrow::Cow;

use serde::Deserialize;

use crate::sources::lenient::{self, List, Object, Text};

/// One record.
#[derive(Debug, Deserialize)]
pub struct RawRecord<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub title: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub time: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "titleUrl", deserialize_with = "lenient::string")]
    pub title_url: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub details: Option<List<Object<RawDetail<'a>>>>,
    #[serde(default, rename = "safeHtmlItem")]
    pub safe_html_item: Option<List<Object<RawHtml>>>,
    #[serde(borrow, default, rename = "userInteractions")]
    pub user_interactions: Option<List<Object<RawInteractionEntry<'a>>>>,
    #[serde(borrow, default, rename = "imageFile", deserialize_with = "lenient::string")]
    pub image_file: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "attachedFiles")]
    pub attached_files: Option<List<Text<'a>>>,
}

/// Just what regrouping needs: the time and the conversation URL.
#[derive(Debug, Deserialize)]
pub struct RawKeys<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub time: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "titleUrl", deserialize_with = "lenient::string")]
    pub title_url: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub details: Option<List<Object<RawDetail<'a>>>>,
}

impl RawKeys<'_> {
    /// The conversation id from `titleUrl` or a `details` URL.
    pub fn conversation_id(&self) -> Option<String> {
        conversation_id(self.title_url.as_deref(), self.details.as_ref())
    }
}

fn conversation_id(title_url: Option<&str>, details: Option<&List<Object<RawDetail<'_>>>>) -> Option<String> {
    let detail_urls =
        details.into_iter().flat_map(|list| list.0.iter()).filter_map(Object::as_ref).filter_map(|detail| detail.url.as_deref());
    title_url.into_iter().chain(detail_urls).find_map(super::conversation_id_from_url)
}

/// `details[]`: `{name, url}` or `{name: "Request"|"Response", value}`.
#[derive(Debug, Deserialize)]
pub struct RawDetail<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub url: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub value: Option<Cow<'a, str>>,
}

/// `safeHtmlItem[]`: the answer, its HTML already turned into text while the parser holds the
/// unescaped HTML (`html_to_text`; the HTML itself is never kept).
#[derive(Debug, Deserialize)]
pub struct RawHtml {
    #[serde(default, rename = "html", deserialize_with = "answer_text")]
    pub text: Option<String>,
    /// memport's own mark (Takeout writes no such member): the HTML reader read bytes of this
    /// record that were not UTF-8 as U+FFFD (`html.rs`).
    #[serde(default, rename = "notUtf8", deserialize_with = "lenient::boolean")]
    pub not_utf8: Option<bool>,
}

fn answer_text<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    lenient::converted_string(deserializer, crate::sources::html_text::html_to_text)
}

/// `userInteractions[]`: `{userInteraction: {request, response}}`.
#[derive(Debug, Deserialize)]
pub struct RawInteractionEntry<'a> {
    #[serde(borrow, default, rename = "userInteraction")]
    pub user_interaction: Object<RawInteraction<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct RawInteraction<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub request: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub response: Option<Cow<'a, str>>,
}

impl RawRecord<'_> {
    /// The conversation id from `titleUrl` or a `details` URL.
    pub fn conversation_id(&self) -> Option<String> {
        conversation_id(self.title_url.as_deref(), self.details.as_ref())
    }

    /// The value of the `details` entry named `name` (2024 variant).
    pub fn detail_value(&self, name: &str) -> Option<&str> {
        self.details
            .iter()
            .flat_map(|list| list.0.iter())
            .filter_map(Object::as_ref)
            .find(|detail| detail.name.as_deref() == Some(name))
            .and_then(|detail| detail.value.as_deref())
    }

    /// The first `userInteraction`.
    pub fn interaction(&self) -> Option<&RawInteraction<'_>> {
        self.user_interactions
            .iter()
            .flat_map(|list| list.0.iter())
            .filter_map(Object::as_ref)
            .find_map(|entry| entry.user_interaction.as_ref())
    }
}
