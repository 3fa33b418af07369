// Package yamlfile decodes brownout's YAML files strictly — unknown fields,
// duplicate keys and type mismatches are errors — and reports every problem as
// file:line:col with the field, so a rejected file is fixed in one pass.
//
// [Decode] returns a [Doc] that keeps the node tree: validators use
// [Doc.Errorf] with a dotted path ("timeline.2.target") to report semantic
// problems at the right position, and collect them in [Errors].
//
// [Duration] ("30s") and [Percent] ("25%") are the scalar types every brownout
// file uses.
package yamlfile
