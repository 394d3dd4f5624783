package remote

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
)

// postBytes is what postRequest.write puts on the wire, and what
// (*http.Request).Write writes for the same request (send's, before the
// template).
func postBytes(t testing.TB, b *Backend, program, thread string, body []byte) (got, want []byte) {
	t.Helper()
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	p := postRequest{t: &b.post, program: program, thread: thread, body: body}
	if err := p.write(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	h := b.header.Clone()
	if program != "" {
		h[headerProgram] = []string{program}
		if thread != "" {
			h[headerThread] = []string{thread}
		}
	}
	req := &http.Request{Method: http.MethodPost, URL: b.chatURL, Host: b.chatURL.Host, Header: h,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
	if len(body) == 0 {
		// (The router's bodies are never empty; Write sends a body of
		// unknown length as chunked, NoBody as Content-Length: 0.)
		req.Body = http.NoBody
	}
	var ref bytes.Buffer
	if err := req.Write(&ref); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), ref.Bytes()
}

func testBackend(t testing.TB, spec string, env map[string]string) *Backend {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	specs, err := ParseSpecs([]string{spec})
	if err != nil {
		t.Fatal(err)
	}
	b, err := newBackend(specs[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The inline transport's generation request is byte for byte what
// net/http writes for it: a path under the backend's URL, an IPv6 host,
// an API key, program headers with line breaks and spaces to clean.
func TestPostMatchesRequestWrite(t *testing.T) {
	backends := []*Backend{
		testBackend(t, "http://127.0.0.1:8000,kind=pitstop", nil),
		testBackend(t, "http://[::1]:9/prefix/v2,kind=vllm,api-key-env=R14I_KEY", map[string]string{"R14I_KEY": "sk-test"}),
		testBackend(t, "http://backend.local", nil),
	}
	cases := []struct{ program, thread string }{
		{"", ""}, {"p1", ""}, {"p1", "t1"}, {"tenant/p 2 ", "\tt\r\n2"}, {"a\nb\rc", " x "}, {"", "ignored"},
	}
	for _, b := range backends {
		for _, c := range cases {
			for _, body := range [][]byte{nil, []byte(`{"messages":[]}`), bytes.Repeat([]byte("x"), 9000)} {
				got, want := postBytes(t, b, c.program, c.thread, body)
				if !bytes.Equal(got, want) {
					t.Errorf("%s, program %q thread %q, %d bytes of body:\n got %q\nwant %q", b.name, c.program, c.thread, len(body), head(got), head(want))
				}
			}
		}
	}
}

func head(b []byte) []byte {
	if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
		return b[:i]
	}
	return b
}

// A backend header that would sort after the program headers cannot be
// written from the template.
func TestPostTemplateRejectsLateHeader(t *testing.T) {
	b := testBackend(t, "http://127.0.0.1:8000", nil)
	h := b.header.Clone()
	h.Set("X-Zeta", "1")
	if _, err := newPostTemplate(b.chatURL, h); err == nil {
		t.Fatal("a header after X-Pitstop-Program was taken")
	}
}

func FuzzPostMatchesRequestWrite(f *testing.F) {
	f.Add("p", "t", []byte("{}"))
	f.Add("a\r\nb", " \t", []byte(""))
	f.Add("\x00\x7f é", "\n", []byte("body"))
	b := testBackend(f, "http://127.0.0.1:8000,kind=pitstop", nil)
	f.Fuzz(func(t *testing.T, program, thread string, body []byte) {
		got, want := postBytes(t, b, program, thread, body)
		if !bytes.Equal(got, want) {
			t.Fatalf("program %q thread %q:\n got %q\nwant %q", program, thread, head(got), head(want))
		}
	})
}

// BenchmarkPostWrite is a generation's request written: from the
// backend's template ("template"), and as send wrote it before session
// 12 ("request": an *http.Request with its context, its body's reader and
// (*http.Request).Write).
func BenchmarkPostWrite(b *testing.B) {
	be := testBackend(b, "http://127.0.0.1:8000,kind=vllm", nil)
	body := []byte(`{"messages":[{"role":"user","content":"call-1"}],"model":"m","stream":true,"stream_options":{"include_usage":true}}`)
	w := bufio.NewWriterSize(io.Discard, 4<<10)
	ctx := context.Background()
	b.Run("writer=template", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p := postRequest{t: &be.post, body: body}
			if err := p.write(w); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("writer=request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req := (&http.Request{Method: http.MethodPost, URL: be.chatURL, Host: be.chatURL.Host, Header: be.header,
				Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
				GetBody: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }}).WithContext(ctx)
			if err := req.Write(w); err != nil {
				b.Fatal(err)
			}
		}
	})
}
