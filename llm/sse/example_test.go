package sse_test

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/brownout-dev/brownout/llm/sse"
)

func Example() {
	stream := "event: message_start\r\ndata: {\"a\":1}\r\n\r\n: keep-alive\n\ndata: line one\ndata: line two\n\ndata: [DONE]"
	r := sse.NewReader(strings.NewReader(stream))
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Printf("%d %q %q\n", r.Index(), ev.Event, ev.Data)
	}

	w := sse.NewWriter(os.Stdout)
	_ = w.Event("ping", []byte(`{"type":"ping"}`))
	_ = w.Data([]byte("[DONE]"))
	// Output:
	// 0 "message_start" "{\"a\":1}"
	// 1 "" "line one\nline two"
	// 2 "" "[DONE]"
	// event: ping
	// data: {"type":"ping"}
	//
	// data: [DONE]
}
