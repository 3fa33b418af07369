package faults_test

import (
	"encoding/json"
	"testing"

	"github.com/brownout-dev/brownout/faults"
	"github.com/brownout-dev/brownout/llm"
)

func TestQualityDrop(t *testing.T) {
	t.Run("text keeps its length", func(t *testing.T) {
		p := plan(20)
		orig := p.Response.Content
		apply(t, faults.Spec{Kind: faults.KindQualityDrop}, p, env(llm.FormatOpenAI))
		if p.Response.Content == orig || len(p.Chunks) != 20 || !p.Corrupted {
			t.Fatalf("%q (%d tokens)", p.Response.Content, len(p.Chunks))
		}
	})
	t.Run("JSON keeps its keys", func(t *testing.T) {
		p := plan(0)
		p.SetContent(`{"city":"Paris","temp":21.5,"tags":["a"],"ok":true}`)
		apply(t, faults.Spec{Kind: faults.KindQualityDrop}, p, env(llm.FormatOpenAI))
		var v map[string]any
		if err := json.Unmarshal([]byte(p.Response.Content), &v); err != nil {
			t.Fatal(err)
		}
		if v["city"] != "" || v["temp"] != 0.0 || len(v["tags"].([]any)) != 0 || v["ok"] != false {
			t.Fatalf("%s", p.Response.Content)
		}
	})
}
