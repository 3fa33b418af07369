package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHTMLExpectationsFirst: the verdicts come before the charts, the
// failing ones first, so a failed expectation is the first thing read.
func TestHTMLExpectationsFirst(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, fixture()))
	page := buf.String()
	failed := strings.Index(page, "fired at 36s, delivery to oncall failed")
	passed := strings.Index(page, "<td>&lt;= 30s</td>")
	chart := strings.Index(page, "<svg ")
	require.Positive(t, failed)
	require.Positive(t, passed)
	require.Less(t, failed, chart, "the failing expectation sits above the charts")
	require.Less(t, passed, chart, "every expectation sits above the charts")
	require.Less(t, failed, passed, "failing expectations first")

	var md bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, fixture()))
	require.Less(t, strings.Index(md.String(), "| FAIL | alert"), strings.Index(md.String(), "| PASS | ttd"), "failing first in Markdown too")
}
