// Package codecs is the one table of brownout's wire formats: for each
// format, its codec and the HTTP face of its chat endpoint (the path a
// model's requests go to, how a key is sent, the environment variable that
// conventionally holds one). The gateway, the mock providers and the eval
// client look formats up here; adding a format is adding a row.
//
// The table is a plain value, filled by no init function.
package codecs
