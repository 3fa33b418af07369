package codecs_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brownout-dev/brownout/llm"
	"github.com/brownout-dev/brownout/llm/codecs"
)

func TestLookupEveryFormat(t *testing.T) {
	for _, f := range codecs.Formats() {
		t.Run(string(f), func(t *testing.T) {
			row, err := codecs.Lookup(f)
			require.NoError(t, err)
			require.Equal(t, f, row.Codec.Format(), "a row's codec speaks the row's format")
			p := row.Path("m-1", false)
			model, stream, err := row.Route(p)
			require.NoError(t, err, "the format's own path routes")
			require.False(t, stream)
			if model != "" {
				require.Equal(t, "m-1", model)
			}
			_, _, err = row.Route("/v1/nowhere")
			var le *llm.Error
			require.True(t, errors.As(err, &le), "an unknown path is an *llm.Error: %v", err)
			require.Equal(t, 404, le.Status)
			require.NotEmpty(t, le.Message)
			require.NotEmpty(t, row.AuthHeader)
			require.NotEmpty(t, row.KeyEnv)
		})
	}
}

func TestLookupDefaultAndUnknown(t *testing.T) {
	row, err := codecs.Lookup("")
	require.NoError(t, err)
	require.Equal(t, llm.FormatOpenAI, row.Codec.Format())
	_, err = codecs.Lookup("cohere")
	require.EqualError(t, err, `unknown format "cohere": want one of `+codecs.Names())
	require.Equal(t, llm.FormatOpenAI, codecs.Wording("cohere").(llm.Codec).Format(), "an unknown format is worded as the default")
}

// Every format words every error type, and the parametrised texts carry
// their parameters.
func TestWordingIsComplete(t *testing.T) {
	types := []llm.ErrorType{llm.ErrInvalidRequest, llm.ErrAuthentication, llm.ErrPermission, llm.ErrNotFound,
		llm.ErrRateLimit, llm.ErrOverloaded, llm.ErrServer, llm.ErrTimeout, llm.ErrContentFilter}
	for _, f := range codecs.Formats() {
		w := codecs.Wording(f)
		for _, ty := range types {
			_, msg := w.ErrorText(ty)
			require.NotEmpty(t, msg, "%s %s", f, ty)
		}
		require.Contains(t, w.ContextLengthText(1000, 1234), "1234", f)
		_, msg := w.UnsupportedParamText("temperature")
		require.Contains(t, msg, "temperature", f)
		require.Contains(t, w.ModelNotFoundText("gpt-9"), "gpt-9", f)
		require.NotEmpty(t, w.RateLimitText("rpm", 1500*time.Millisecond), f)
	}
}
