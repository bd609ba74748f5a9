//! The slots memories fill: which hold one current value at a time (a home, an employer: a new
//! value supersedes the old one), and which hold contact details (written only when the user
//! asks, `--extract-pii keep`). Every other slot holds many values.

/// `(slot, single-valued, personal)` for every slot extraction fills, and the slots an earlier
/// memport wrote, so a sync reading its state back still knows them.
const SLOTS: &[(&str, bool, bool)] = &[
    ("name", true, false),
    ("age", true, false),
    ("pronouns", true, false),
    ("home", true, false),
    ("origin", true, false),
    ("nationality", true, false),
    ("occupation", true, false),
    ("employer", true, false),
    ("partner", true, false),
    ("diet", true, false),
    ("birthday", true, false),
    ("email", true, true),
    ("phone", true, true),
    ("address", true, true),
    ("languages", false, false),
    ("education", false, false),
    ("teaches", false, false),
    ("work", false, false),
    ("member_of", false, false),
    ("trait", false, false),
    ("likes", false, false),
    ("dislikes", false, false),
    ("favourite", false, false),
    ("does_not_eat", false, false),
    ("eats", false, false),
    ("relation", false, false),
    ("children", false, false),
    ("partner_fact", false, false),
    ("lives_with", false, false),
    ("goal", false, false),
    ("learning", false, false),
    ("decision", false, false),
    ("instruction", false, false),
    ("pitfall", false, false),
    ("skill", false, false),
    ("environment", false, false),
    ("project", false, false),
    ("allergy", false, false),
    ("fear", false, false),
    ("health", false, false),
    ("habit", false, false),
    ("has", false, false),
    ("about", false, false),
    ("former_home", false, false),
    ("former_work", false, false),
    ("life_event", false, false),
    ("experience", false, false),
    ("situation", false, false),
    ("location", false, false),
];

/// The slot called `name` (a `'static` name) and whether it holds one current value; `None`
/// for a slot no memport knows (a state a newer version wrote).
pub fn slot_named(name: &str) -> Option<(&'static str, bool)> {
    SLOTS.iter().find(|(slot, _, _)| *slot == name).map(|(slot, single, _)| (*slot, *single))
}

/// Whether a slot holds one current value at a time.
pub fn is_single_valued(slot: &str) -> bool {
    slot_named(slot).is_some_and(|(_, single)| single)
}

/// Whether a slot holds a contact detail (e-mail, phone, street address): personal data that
/// is written only when the user asks (`--extract-pii keep`), and marked not exportable.
pub fn is_personal_slot(slot: &str) -> bool {
    SLOTS.iter().any(|(name, _, personal)| *name == slot && *personal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_valued_and_personal_slots_are_known() {
        assert_eq!(slot_named("home"), Some(("home", true)));
        assert_eq!(slot_named("likes"), Some(("likes", false)));
        assert_eq!(slot_named("no such slot"), None);
        assert!(is_personal_slot("email") && !is_personal_slot("home"));
    }
}
