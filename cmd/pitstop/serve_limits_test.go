package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// nearLimitBody is a chat request of about size bytes whose one user
// message is English-like text: far over any context, under --max-body.
func nearLimitBody(size int) []byte {
	words := strings.Fields("the a of to and in is it that for on with as was at by this from " +
		"weather city tool call result answer question model server memory prompt context token " +
		"running quickly slowly between before after during every little large small program")
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString(`{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"`)
	for b.Len() < size-8 {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteByte(' ')
	}
	b.WriteString(`"}]}`)
	return []byte(b.String())
}

// TestServeNearLimitMemory sends 8 concurrent requests whose prompt is
// ~7.5 MiB of text (under the default --max-body of 8 MiB, far over the
// context): each is refused (400 context_length_exceeded, or 413), the
// server's peak RSS stays under 600 MB, and it still answers afterwards.
func TestServeNearLimitMemory(t *testing.T) {
	p := startServe(t, "--model", "scripted-test")
	start := p.status("VmHWM")
	body := nearLimitBody(7<<20 + 512<<10)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp, err := http.Post(p.url("/v1/chat/completions"), "application/json", strings.NewReader(string(body)))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var out struct {
				Error struct{ Code string } `json:"error"`
			}
			data, _ := io.ReadAll(resp.Body)
			_ = json.Unmarshal(data, &out)
			ok := resp.StatusCode == http.StatusRequestEntityTooLarge ||
				resp.StatusCode == http.StatusBadRequest && out.Error.Code == "context_length_exceeded"
			if !ok {
				t.Errorf("status %d, body %.300s", resp.StatusCode, data)
			}
		})
	}
	wg.Wait()
	peak := p.status("VmHWM")
	t.Logf("peak RSS (VmHWM): %d MiB at start, %d MiB after 8 concurrent %.1f MiB prompts", start>>20, peak>>20, float64(len(body))/(1<<20))
	if peak >= 600e6 {
		t.Errorf("peak RSS %d MB, want under 600 MB", peak/1e6)
	}
	resp, err := http.Post(p.url("/v1/chat/completions"), "application/json",
		strings.NewReader(`{"model":"pitstop-scripted-test","messages":[{"role":"user","content":"/say still here"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), "still here") {
		t.Errorf("after the big prompts: status %d, body %.300s", resp.StatusCode, data)
	}
}

// trickleResult is what a trickling client saw.
type trickleResult struct {
	response string        // everything the server sent
	closed   time.Duration // from the first body byte to the connection's end
}

// trickle sends head (a request's header block, Content-Length: 1000) and
// then its body one byte a second, until the server ends the connection
// or giveUp passes.
func trickle(t *testing.T, addr, head string, giveUp time.Duration) trickleResult {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return trickleResult{}
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Error(err)
		return trickleResult{}
	}
	start := time.Now()
	got := make(chan trickleResult, 1)
	go func() {
		data, _ := io.ReadAll(bufio.NewReader(conn)) // a reset ends it as well as EOF
		got <- trickleResult{response: string(data), closed: time.Since(start)}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	stop := time.After(giveUp)
	for {
		if _, err := conn.Write([]byte(" ")); err != nil {
			return <-got // the server closed; the reader has its end
		}
		select {
		case r := <-got:
			return r
		case <-stop:
			return trickleResult{response: "(still open)", closed: giveUp}
		case <-tick.C:
		}
	}
}

// TestServeTricklingBody trickles two bodies one byte a second into a server
// with the default --read-timeout: one to the chat endpoint (answered 408),
// one that fails authentication and so is never read by a handler; both
// connections end within 20 s.
func TestServeTricklingBody(t *testing.T) {
	p := startServe(t, "--model", "scripted-test", "--predictor", "history", "--api-key", "k1")
	const head = "POST %s HTTP/1.1\r\nHost: pitstop\r\nContent-Type: application/json\r\n%sContent-Length: 1000\r\n\r\n"
	cases := []struct {
		name, head, want string
	}{
		{"chat", fmt.Sprintf(head, "/v1/chat/completions", "Authorization: Bearer k1\r\n"), "HTTP/1.1 408"},
		{"unauthenticated", fmt.Sprintf(head, "/v1/chat/completions", ""), "HTTP/1.1 401"},
	}
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Go(func() {
			r := trickle(t, p.addr, c.head, 25*time.Second)
			t.Logf("%s: connection ended after %v: %.200q", c.name, r.closed.Round(time.Millisecond), r.response)
			if r.closed > 20*time.Second {
				t.Errorf("%s: connection not ended within 20 s", c.name)
			}
			if r.response != "" && !strings.HasPrefix(r.response, c.want) {
				t.Errorf("%s: answer %.200q, want %s or a closed connection", c.name, r.response, c.want)
			}
			if c.want == "HTTP/1.1 408" && !strings.Contains(r.response, `"code":"request_timeout"`) {
				t.Errorf("%s: no request_timeout error in %.300q", c.name, r.response)
			}
		})
	}
	wg.Wait()
}
