//! The run's settings that take one of a few named values, one enum each. Each derives clap's
//! `ValueEnum` (the command line reads it), serde (the run report echoes it by its name) and
//! `Default` (the command line's default); pipeline files name the same values, read by
//! [`parse_choice`], which says what the valid ones are. The settings shared with the sources
//! ([`crate::sources::BranchPolicy`]) are defined there the same way.

use clap::ValueEnum;
use serde::Serialize;

use crate::error::ConfigError;

/// Whether duplicate messages are dropped (`--dedup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DedupPolicy {
    /// By PAM content hash; the first occurrence in input order wins.
    #[default]
    Content,
    /// Keep every message.
    Off,
}

/// Whether memories are extracted from what the user said (`--extract`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Extractor {
    /// Read the user's clauses in five languages.
    #[default]
    Rules,
    /// Transcripts and the provider's own memories only.
    Off,
}

/// What becomes of extracted contact details (`--extract-pii`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PiiPolicy {
    /// Left out.
    #[default]
    Drop,
    /// Written, marked not exportable where the format can say so.
    Keep,
}

/// What is masked in the transcripts written (`--redact`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Redaction {
    /// Nothing: the text as it is.
    #[default]
    None,
    /// API keys, tokens, private keys, passwords, card and account numbers, one-time codes.
    Secrets,
}

/// How a Parquet dataset is laid out (`--partition-by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Partitioning {
    /// One folder per table.
    #[default]
    None,
    /// Hive-style `provider=<name>` folders in each table.
    Provider,
}

/// The value named `value` of the setting `option` (a `what`, as the message calls it).
///
/// # Errors
/// [`ConfigError::Option`] naming the option and its valid values.
pub fn parse_choice<T: ValueEnum>(option: &str, what: &str, value: &str) -> Result<T, ConfigError> {
    T::from_str(value, false).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|variant| variant.to_possible_value())
            .map(|value| format!("`{}`", value.get_name()))
            .collect();
        ConfigError::Option { option: option.into(), reason: format!("`{value}` is not {what} (use {})", names.join(" or ")) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_read_by_its_name_and_a_wrong_one_names_the_valid_ones() {
        assert_eq!(parse_choice::<Redaction>("redact", "a redaction", "secrets").ok(), Some(Redaction::Secrets));
        let error =
            parse_choice::<DedupPolicy>("dedup", "a dedup policy", "maybe").err().map(|error| error.to_string()).unwrap_or_default();
        assert!(error.contains("`maybe` is not a dedup policy (use `content` or `off`)"), "{error}");
    }

    #[test]
    fn the_report_names_each_value_as_the_command_line_does() {
        assert_eq!(serde_json::to_value(Partitioning::Provider).ok(), Some(serde_json::json!("provider")));
        assert_eq!(serde_json::to_value(PiiPolicy::default()).ok(), Some(serde_json::json!("drop")));
        assert_eq!(Extractor::default().to_possible_value().map(|value| value.get_name().to_owned()).as_deref(), Some("rules"));
    }
}
