//! The AWS shared config files, as the AWS CLI and SDKs read them: the profile named by
//! `AWS_PROFILE` (else `default`) in `~/.aws/credentials` (`[name]`) and `~/.aws/config`
//! (`[profile name]`, or `[default]`), their paths movable with `AWS_SHARED_CREDENTIALS_FILE`
//! and `AWS_CONFIG_FILE`. Only the keys memport uses are read.

use std::path::PathBuf;

/// What the shared files say for the profile in use.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SharedConfig {
    /// `aws_access_key_id`.
    pub access_key_id: Option<String>,
    /// `aws_secret_access_key`.
    pub secret_access_key: Option<String>,
    /// `aws_session_token` (temporary credentials).
    pub session_token: Option<String>,
    /// `region`.
    pub region: Option<String>,
    /// `endpoint_url` (an S3-compatible server).
    pub endpoint_url: Option<String>,
}

impl SharedConfig {
    /// Reads the files; a missing or unreadable file adds nothing.
    pub fn load() -> SharedConfig {
        let profile = std::env::var("AWS_PROFILE").ok().filter(|name| !name.is_empty()).unwrap_or_else(|| "default".into());
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        let file = |variable: &str, default: &str| {
            std::env::var_os(variable).map(PathBuf::from).unwrap_or_else(|| home.join(".aws").join(default))
        };
        let credentials = std::fs::read_to_string(file("AWS_SHARED_CREDENTIALS_FILE", "credentials")).unwrap_or_default();
        let config = std::fs::read_to_string(file("AWS_CONFIG_FILE", "config")).unwrap_or_default();
        SharedConfig::from_texts(&profile, &credentials, &config)
    }

    /// The profile `profile` from the two files' texts; the credentials file wins for keys.
    pub fn from_texts(profile: &str, credentials: &str, config: &str) -> SharedConfig {
        let from_credentials = section(credentials, profile);
        let config_name = if profile == "default" { "default".to_owned() } else { format!("profile {profile}") };
        let from_config = section(config, &config_name);
        let value = |key: &str| {
            let find = |pairs: &[(String, String)]| pairs.iter().find(|(name, _)| name == key).map(|(_, value)| value.clone());
            find(&from_credentials).or_else(|| find(&from_config))
        };
        SharedConfig {
            access_key_id: value("aws_access_key_id"),
            secret_access_key: value("aws_secret_access_key"),
            session_token: value("aws_session_token"),
            region: value("region"),
            endpoint_url: value("endpoint_url"),
        }
    }
}

/// The `key = value` lines of section `[name]` of an INI text (comments start with `#` or `;`).
fn section(text: &str, name: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut pairs = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[').and_then(|rest| rest.strip_suffix(']')) {
            inside = header.trim() == name;
            continue;
        }
        if inside && let Some((key, value)) = line.split_once('=') {
            pairs.push((key.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    pairs
}

/// The endpoint requests go to, for error messages.
pub fn endpoint_description() -> String {
    std::env::var("AWS_ENDPOINT_URL")
        .or_else(|_| std::env::var("AWS_ENDPOINT_URL_S3"))
        .or_else(|_| std::env::var("AWS_ENDPOINT"))
        .ok()
        .or(SharedConfig::load().endpoint_url)
        .unwrap_or_else(|| "AWS S3".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_in_use_is_read_from_both_files_with_credentials_winning() {
        let credentials = "[default]\naws_access_key_id = AKIDEFAULT\naws_secret_access_key = s1\n\n[work]\naws_access_key_id=AKIWORK\naws_secret_access_key=s2\n";
        let config = "# comment\n[default]\nregion = eu-west-1\n[profile work]\nregion = eu-central-1\nendpoint_url = http://127.0.0.1:9000\naws_access_key_id = ignored\n";
        let work = SharedConfig::from_texts("work", credentials, config);
        assert_eq!(work.access_key_id.as_deref(), Some("AKIWORK"));
        assert_eq!(work.region.as_deref(), Some("eu-central-1"));
        assert_eq!(work.endpoint_url.as_deref(), Some("http://127.0.0.1:9000"));
        let default = SharedConfig::from_texts("default", credentials, config);
        assert_eq!((default.access_key_id.as_deref(), default.region.as_deref()), (Some("AKIDEFAULT"), Some("eu-west-1")));
        assert_eq!(SharedConfig::from_texts("absent", credentials, config), SharedConfig::default());
    }
}
