//! The rows of the `retractions` table: one per conversation a sync retracts (`message_id`
//! null) and one per message it withdraws (erased from its memory store since an earlier run
//! wrote it), in the order the sync gives them (by provider, then conversation id), each in
//! its provider's partition when the dataset is partitioned.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::builder::{StringBuilder, StringDictionaryBuilder, TimestampMicrosecondBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::ArrowError;

use crate::model::{Provider, RetractedConversation};
use crate::sinks::parquet::schema::Table;

/// The `retractions` columns of one partition.
#[derive(Default)]
struct RetractionColumns {
    provider: StringDictionaryBuilder<Int32Type>,
    conversation_id: StringBuilder,
    title: StringBuilder,
    created_at: TimestampMicrosecondBuilder,
    retracted_by: StringDictionaryBuilder<Int32Type>,
    retracted_at: TimestampMicrosecondBuilder,
    message_id: StringBuilder,
}

impl RetractionColumns {
    fn add(&mut self, retracted: &RetractedConversation) {
        if retracted.is_of_messages() {
            for message in &retracted.messages {
                self.add_row(retracted, Some(message));
            }
        } else {
            self.add_row(retracted, None);
        }
    }

    fn add_row(&mut self, retracted: &RetractedConversation, message: Option<&str>) {
        self.provider.append_value(retracted.provider.as_str());
        self.conversation_id.append_value(&retracted.conversation_id);
        self.title.append_option(retracted.title.as_deref());
        self.created_at.append_option(retracted.created_at);
        self.retracted_by.append_value(&retracted.retracted_by);
        self.retracted_at.append_value(retracted.retracted_at);
        self.message_id.append_option(message);
    }

    fn finish(mut self, with_provider: bool) -> Result<RecordBatch, ArrowError> {
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(7);
        if with_provider {
            columns.push(Arc::new(self.provider.finish()));
        }
        columns.push(Arc::new(self.conversation_id.finish()));
        columns.push(Arc::new(self.title.finish()));
        columns.push(Arc::new(self.created_at.finish().with_timezone("UTC")));
        columns.push(Arc::new(self.retracted_by.finish()));
        columns.push(Arc::new(self.retracted_at.finish().with_timezone("UTC")));
        columns.push(Arc::new(self.message_id.finish()));
        RecordBatch::try_new(Table::Retractions.schema(with_provider), columns)
    }
}

/// The `retractions` rows of `retracted`, per partition: a provider, or `None` when the dataset
/// is not partitioned (then with the `provider` column).
///
/// # Errors
/// [`ArrowError`] only if a built column does not match its schema, which the tests rule out.
pub fn encode(
    retracted: &[RetractedConversation],
    partition_by_provider: bool,
) -> Result<BTreeMap<Option<Provider>, RecordBatch>, ArrowError> {
    let mut partitions: BTreeMap<Option<Provider>, RetractionColumns> = BTreeMap::new();
    for conversation in retracted {
        partitions.entry(partition_by_provider.then_some(conversation.provider)).or_default().add(conversation);
    }
    let mut batches = BTreeMap::new();
    for (partition, columns) in partitions {
        batches.insert(partition, columns.finish(!partition_by_provider)?);
    }
    Ok(batches)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    use arrow_array::types::TimestampMicrosecondType;

    use super::*;

    fn retracted(provider: Provider, id: &str, title: Option<&str>, created_at: Option<i64>) -> RetractedConversation {
        RetractedConversation {
            provider,
            conversation_id: id.to_owned(),
            title: title.map(str::to_owned),
            created_at,
            retracted_by: "run-2".to_owned(),
            retracted_at: 50,
            messages: Vec::new(),
        }
    }

    #[test]
    fn one_row_per_retraction_with_nulls_for_what_is_unknown() {
        let rows = [retracted(Provider::ChatGpt, "c1", Some("Plans"), Some(10)), retracted(Provider::Claude, "k1", None, None)];
        let batches = encode(&rows, false).unwrap();
        let batch = &batches[&None];
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(batch.schema(), Table::Retractions.schema(true));
        let ids = batch.column_by_name("conversation_id").unwrap().as_string::<i32>();
        assert_eq!((ids.value(0), ids.value(1)), ("c1", "k1"));
        assert!(batch.column_by_name("title").unwrap().is_null(1));
        let created = batch.column_by_name("created_at").unwrap().as_primitive::<TimestampMicrosecondType>();
        assert_eq!(created.value(0), 10);
        assert!(created.is_null(1));
        let retracted_at = batch.column_by_name("retracted_at").unwrap().as_primitive::<TimestampMicrosecondType>();
        assert_eq!(retracted_at.values().to_vec(), [50, 50]);
        assert_eq!(batch.column_by_name("message_id").unwrap().null_count(), 2, "whole conversations name no message");

        let partitioned = encode(&rows, true).unwrap();
        assert_eq!(partitioned.keys().copied().collect::<Vec<_>>(), [Some(Provider::ChatGpt), Some(Provider::Claude)]);
        assert!(partitioned[&Some(Provider::Claude)].column_by_name("provider").is_none(), "the folder carries it");
    }

    #[test]
    fn a_withdrawal_of_messages_is_a_row_per_message() {
        let mut withdrawal = retracted(Provider::ChatGpt, "c1", Some("Plans"), None);
        withdrawal.messages = vec!["m1".into(), "m2".into()];
        let batches = encode(&[retracted(Provider::ChatGpt, "c0", None, None), withdrawal], false).unwrap();
        let batch = &batches[&None];
        let ids = batch.column_by_name("conversation_id").unwrap().as_string::<i32>();
        let messages = batch.column_by_name("message_id").unwrap().as_string::<i32>();
        let rows: Vec<(&str, Option<&str>)> =
            (0..batch.num_rows()).map(|row| (ids.value(row), messages.is_valid(row).then(|| messages.value(row)))).collect();
        assert_eq!(rows, [("c0", None), ("c1", Some("m1")), ("c1", Some("m2"))]);
    }
}
