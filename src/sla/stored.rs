//! How an SLA is stored in the files that hold settings (config.json, search.json): its
//! canonical terms and its window in seconds, `{"terms": "p99.9<100ms, window=10s",
//! "window_s": 10.0}`, and read back by parsing the terms again.

use std::time::Duration;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::spec::Sla;

/// The stored form.
#[derive(Serialize, Deserialize)]
struct Stored {
    /// The terms, in canonical form.
    terms: String,
    /// Window length, seconds.
    window_s: f64,
}

impl From<&Sla> for Stored {
    fn from(sla: &Sla) -> Stored {
        Stored {
            terms: sla.to_string(),
            window_s: sla.window.as_secs_f64(),
        }
    }
}

impl Stored {
    fn sla(&self) -> Result<Sla, String> {
        if !(self.window_s.is_finite() && self.window_s > 0.0) {
            return Err(format!("window_s {} is not a window", self.window_s));
        }
        Sla::parse(&self.terms, Duration::from_secs_f64(self.window_s)).map_err(|e| e.to_string())
    }
}

/// `#[serde(with = "crate::sla::stored")]` on an `Sla`.
pub fn serialize<S: Serializer>(sla: &Sla, serializer: S) -> Result<S::Ok, S::Error> {
    Stored::from(sla).serialize(serializer)
}

/// `#[serde(with = "crate::sla::stored")]` on an `Sla`.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Sla, D::Error> {
    Stored::deserialize(deserializer)?
        .sla()
        .map_err(D::Error::custom)
}

/// `#[serde(with = "crate::sla::stored::optional")]` on an `Option<Sla>`.
pub mod optional {
    use super::*;

    /// Stores `None` as `null`.
    pub fn serialize<S: Serializer>(sla: &Option<Sla>, serializer: S) -> Result<S::Ok, S::Error> {
        sla.as_ref().map(Stored::from).serialize(serializer)
    }

    /// Reads `null` (or a missing field, with `#[serde(default)]`) as `None`.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Sla>, D::Error> {
        Option::<Stored>::deserialize(deserializer)?
            .map(|s| s.sla().map_err(D::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize)]
    struct Holder {
        #[serde(with = "crate::sla::stored")]
        sla: Sla,
        #[serde(with = "optional")]
        maybe: Option<Sla>,
    }

    #[test]
    fn an_sla_is_stored_as_its_terms_and_window_and_read_back() {
        let sla = Sla::parse("p99.9<100ms, errors<0.1%", Duration::from_secs(10)).unwrap();
        let holder = Holder {
            sla: sla.clone(),
            maybe: None,
        };
        let json = serde_json::to_string(&holder).unwrap();
        assert_eq!(
            json,
            r#"{"sla":{"terms":"p99.9<100ms, errors<0.1%, window=10s","window_s":10.0},"maybe":null}"#
        );
        let back: Holder = serde_json::from_str(&json).unwrap();
        assert_eq!(back.sla.to_string(), sla.to_string());
        assert_eq!(back.sla.window, sla.window);
        assert!(back.maybe.is_none());
        let bad = r#"{"sla":{"terms":"p99<","window_s":10.0},"maybe":null}"#;
        assert!(serde_json::from_str::<Holder>(bad).is_err());
    }

    #[test]
    fn recall_terms_are_stored_and_read_back() {
        let sla = Sla::parse(
            "p99<10ms, ann:recall@10>=90%, p1(recall)>0.7@1m",
            Duration::from_secs(10),
        )
        .unwrap();
        let json = serde_json::to_string(&Holder {
            sla: sla.clone(),
            maybe: Some(sla.clone()),
        })
        .unwrap();
        assert!(
            json.contains(
                r#""terms":"p99<10ms, ann:recall@10>=0.9, p1(recall)>0.7@1m, window=10s""#
            ),
            "{json}"
        );
        let back: Holder = serde_json::from_str(&json).unwrap();
        assert_eq!(back.sla, sla);
        assert_eq!(back.maybe, Some(sla));
    }
}
