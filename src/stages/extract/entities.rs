//! The entities memories name: the people and animals of relationships (by name), the places of
//! homes and origins, employers, the tools of an environment and the fields of skills and
//! learning. Each entity is known once per run by its normalized name and kind, and is written
//! with the first memory that names it.

use std::collections::HashSet;

use crate::hash::sha256;
use crate::model::Micros;
use crate::model::extracted::{EntityKind, EntityRef, MemoryType};

/// Most words an entity name may have: longer values are descriptions, not names.
const MAX_NAME_WORDS: usize = 4;

/// Words that open a value without being part of the name ("a MacBook", "mein Hund").
const LEADING_WORDS: [&str; 34] = [
    "a", "an", "the", "my", "our", "ein", "eine", "einen", "der", "die", "das", "mein", "meine", "unser", "un", "une", "le", "la", "les",
    "mon", "ma", "mes", "notre", "el", "los", "las", "mi", "mis", "nuestro", "nuestra", "můj", "moje", "můjho", "naše",
];

/// Words in a relationship statement that say it names an animal, in the five languages.
const ANIMAL_WORDS: [&str; 16] = [
    "dog", "cat", "puppy", "kitten", "horse", "hund", "katze", "chien", "chat", "chatte", "perro", "perra", "gato", "gata", "pes", "kočka",
];

/// The entity a memory names, if its slot names one: `(kind, name)`.
pub fn entity_of(memory_type: MemoryType, slot: &str, value: &str, statement: &str) -> Option<(EntityKind, String)> {
    let kind = match (memory_type, slot) {
        (MemoryType::Relationship, "relation") => {
            let statement = statement.to_lowercase();
            let names_animal = statement.split(|c: char| !c.is_alphanumeric()).any(|word| ANIMAL_WORDS.contains(&word));
            if names_animal { EntityKind::Animal } else { EntityKind::Person }
        }
        (MemoryType::Identity, "name") => EntityKind::Person,
        (MemoryType::Identity, "home" | "origin") | (MemoryType::Fact, "former_home") => EntityKind::Place,
        (MemoryType::Identity, "employer") => EntityKind::Organization,
        (MemoryType::Environment, _) => EntityKind::Technology,
        (MemoryType::Skill, _) | (MemoryType::Goal, "learning") => EntityKind::Concept,
        _ => return None,
    };
    let mut words: Vec<&str> = value.split_whitespace().collect();
    // A relationship's value is the clause about the person ("daughter Ema is 7"): the entity
    // is the name in it, and a clause naming no one names no entity.
    if memory_type == MemoryType::Relationship {
        words.retain(|word| word.chars().next().is_some_and(char::is_uppercase));
        words.truncate(MAX_NAME_WORDS);
    }
    while words.first().is_some_and(|word| LEADING_WORDS.contains(&word.to_lowercase().as_str())) {
        words.remove(0);
    }
    if words.is_empty() || words.len() > MAX_NAME_WORDS {
        return None;
    }
    Some((kind, words.join(" ")))
}

/// The entities named so far in a run.
#[derive(Debug, Default)]
pub struct EntityIndex {
    seen: HashSet<String>,
}

impl EntityIndex {
    /// The reference to entity `(kind, name)`; marked as the first mention the first time the
    /// run names it.
    pub fn mention(&mut self, kind: EntityKind, name: String, first_seen: Micros) -> EntityRef {
        let key = key(kind, &name);
        let id = id_of(&key);
        let first_mention = self.seen.insert(key);
        EntityRef { id, name, kind, first_seen, first_mention }
    }

    /// Notes that entity `(kind, name)` is written already (by a memory read back from the
    /// input): a memory the run extracts names it without writing it again.
    /// An entity whose id is not the one this build gives it (another tool's edit) is not
    /// noted: the run writes its own.
    pub fn note_written(&mut self, entity: &EntityRef) {
        let key = key(entity.kind, &entity.name);
        if id_of(&key) == entity.id {
            self.seen.insert(key);
        }
    }
}

/// What an entity is known by: its kind and its name in lower case.
fn key(kind: EntityKind, name: &str) -> String {
    format!("{}\u{1f}{}", kind.as_str(), name.to_lowercase())
}

/// The id of the entity known by `key` (`ent-` and 10 bytes of its SHA-256, hex).
fn id_of(key: &str) -> String {
    let mut id = String::from("ent-");
    crate::hash::push_hex(&mut id, &sha256(key.as_bytes())[..10]);
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_name_entities_of_their_kind_without_articles() {
        assert_eq!(
            entity_of(MemoryType::Relationship, "relation", "Ema", "Has a daughter named Ema"),
            Some((EntityKind::Person, "Ema".into()))
        );
        assert_eq!(entity_of(MemoryType::Relationship, "relation", "Rex", "Hund: Rex"), Some((EntityKind::Animal, "Rex".into())));
        assert_eq!(
            entity_of(MemoryType::Environment, "environment", "a MacBook Pro", ""),
            Some((EntityKind::Technology, "MacBook Pro".into()))
        );
        assert_eq!(entity_of(MemoryType::Identity, "home", "Leeds", ""), Some((EntityKind::Place, "Leeds".into())));
        assert_eq!(entity_of(MemoryType::Preference, "likes", "tea", ""), None);
        assert_eq!(entity_of(MemoryType::Skill, "skill", "a very long description of many things", ""), None);
    }

    #[test]
    fn an_entity_is_first_mentioned_once_whatever_its_case() {
        let mut index = EntityIndex::default();
        let first = index.mention(EntityKind::Place, "Berlin".into(), 5);
        let again = index.mention(EntityKind::Place, "berlin".into(), 9);
        let other_kind = index.mention(EntityKind::Organization, "Berlin".into(), 9);
        assert!(first.first_mention && !again.first_mention && other_kind.first_mention);
        assert_eq!(first.id, again.id);
        assert_ne!(first.id, other_kind.id);
    }

    #[test]
    fn an_entity_written_by_a_memory_read_back_is_not_first_mentioned_again() {
        let mut index = EntityIndex::default();
        let read_back = EntityIndex::default().mention(EntityKind::Place, "Leeds".into(), 1);
        let mut edited = read_back.clone();
        edited.id = "ent-edited".into();
        index.note_written(&edited);
        assert!(index.mention(EntityKind::Place, "Leeds".into(), 3).first_mention, "an id not this build's is not noted");
        let mut index = EntityIndex::default();
        index.note_written(&EntityRef { name: "LEEDS".into(), ..read_back.clone() });
        let extracted = index.mention(EntityKind::Place, "Leeds".into(), 5);
        assert!(!extracted.first_mention);
        assert_eq!(extracted.id, read_back.id);
    }
}
