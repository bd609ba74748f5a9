//! The `entities` member that UMP (`body.structured`) and AIME (`extensions.memport`) write for
//! an extracted memory: each entity's id, name and kind, in that order.

use crate::jcs::write_string;
use crate::model::extracted::EntityRef;

/// Appends `,"entities":[{"id":…,"name":…,"kind":…},…]`; nothing when there are none.
pub fn write_entities_member(out: &mut Vec<u8>, entities: &[EntityRef]) {
    if entities.is_empty() {
        return;
    }
    out.extend_from_slice(b",\"entities\":[");
    for (index, entity) in entities.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"id\":");
        write_string(out, &entity.id);
        out.extend_from_slice(b",\"name\":");
        write_string(out, &entity.name);
        out.extend_from_slice(b",\"kind\":");
        write_string(out, entity.kind.as_str());
        out.push(b'}');
    }
    out.push(b']');
}
