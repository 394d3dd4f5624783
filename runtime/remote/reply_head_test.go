package remote

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/internal/testutil"
)

// replyCases are replies as backends write them (net/http's chunked
// stream, a Content-Length JSON answer, uvicorn's lower-case headers, an
// error, a trailer), and forms parseReplyHead leaves to http.ReadResponse.
var replyCases = []string{
	"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nDate: Fri, 27 Nov 2026 16:00:00 GMT\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"b\r\ndata: {}\n\n\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 13\r\n\r\n{\"choices\":1}",
	"HTTP/1.1 200 OK\r\ndate: x\r\nserver: uvicorn\r\ncontent-type: text/event-stream; charset=utf-8\r\nconnection: keep-alive\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
	"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: 24\r\n\r\n{\"error\":{\"message\":1}}\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Usage: 1\r\n\r\nNEXT",
	"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\nNEXT",
	"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n",
	// for http.ReadResponse
	"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
	"HTTP/1.1 200 OK\r\nX: a\r\n  folded\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nConnection: keep-alive, Upgrade\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nto the close",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	"HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\nok",
}

// readFast reads data's reply as the inline transport's post does when
// parseReplyHead takes its head: the body, its error, and what follows it
// on the connection.
func readFast(data []byte) (h replyHead, ok bool, body []byte, bodyErr error, next []byte) {
	br := bufio.NewReaderSize(bytes.NewReader(data), 4<<10)
	if _, err := br.Peek(1); err != nil {
		return h, false, nil, nil, nil
	}
	buf, _ := br.Peek(br.Buffered())
	h, n, ok := parseReplyHead(buf)
	if !ok {
		return h, false, nil, nil, nil
	}
	_, _ = br.Discard(n)
	var r io.Reader
	if h.chunked {
		cb := newChunkedBody(br)
		r = &cb
	} else {
		r = &lengthBody{r: br, n: h.length}
	}
	body, bodyErr = io.ReadAll(r)
	next, _ = io.ReadAll(br)
	return h, true, body, bodyErr, next
}

// checkReplyHead holds parseReplyHead's reading of data, where it takes
// it, to http.ReadResponse's: status, JSON or not, framing, kept or not,
// the body's bytes, whether it ends in an error, and the bytes after it.
func checkReplyHead(t *testing.T, data []byte) bool {
	t.Helper()
	h, ok, body, bodyErr, next := readFast(data)
	if !ok {
		return false
	}
	br := bufio.NewReaderSize(bytes.NewReader(data), 4<<10)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodPost})
	if err != nil {
		t.Fatalf("%q: taken, but http.ReadResponse: %v", data, err)
	}
	chunked := len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked"
	json := strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json")
	if h.status != resp.StatusCode || h.json != json || h.close != resp.Close || h.chunked != chunked || (!chunked && h.length != resp.ContentLength) {
		t.Fatalf("%q: read %+v; http.ReadResponse: status %d, json %v, close %v, chunked %v, length %d",
			data, h, resp.StatusCode, json, resp.Close, chunked, resp.ContentLength)
	}
	wbody, werr := io.ReadAll(resp.Body)
	wnext, _ := io.ReadAll(br)
	if !bytes.Equal(body, wbody) || (bodyErr == nil) != (werr == nil) {
		t.Fatalf("%q: body %q (%v); net/http's %q (%v)", data, body, bodyErr, wbody, werr)
	}
	if bodyErr == nil && !bytes.Equal(next, wnext) {
		t.Fatalf("%q: after the body %q; after net/http's %q", data, next, wnext)
	}
	return true
}

func TestReplyHeadMatchesReadResponse(t *testing.T) {
	taken := 0
	for i, c := range replyCases {
		if checkReplyHead(t, []byte(c)) {
			taken++
			if i >= 8 {
				t.Errorf("%q: taken; it is one for http.ReadResponse", c)
			}
		} else if i < 8 {
			t.Errorf("%q: left to http.ReadResponse; it is a plain reply", c)
		}
	}
	if taken != 8 {
		t.Errorf("%d cases taken, want 8", taken)
	}
}

// FuzzReplyHead: a reply head parseReplyHead takes is read as
// http.ReadResponse reads it, body and what follows included.
func FuzzReplyHead(f *testing.F) {
	for _, c := range replyCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkReplyHead(t, data)
	})
}

// FuzzReplyHeadParts builds replies most of whose heads parseReplyHead
// takes (FuzzReplyHead's mutations of whole replies seldom keep one
// valid): a status, a fuzzed header between the usual ones, a body framed
// by Content-Length or chunked, and the next reply's bytes after it.
func FuzzReplyHeadParts(f *testing.F) {
	f.Add(200, "Content-Type", "application/json", "Connection", "keep-alive", []byte("{}"), false)
	f.Add(500, "content-type", "text/event-stream", "connection", "Close", []byte("data: x\n\n"), true)
	f.Add(429, "X-Odd", " \tv\x80 ", "Content-Length", "7", []byte("hello"), true)
	f.Fuzz(func(t *testing.T, status int, k1, v1, k2, v2 string, body []byte, chunked bool) {
		var b strings.Builder
		b.WriteString("HTTP/1.1 ")
		b.WriteString(strings.Repeat("0", max(0, 3-len(itoa(status)))) + itoa(status))
		b.WriteString(" OK\r\nDate: today\r\n")
		b.WriteString(k1 + ": " + v1 + "\r\n")
		b.WriteString(k2 + ":" + v2 + "\r\n")
		if chunked {
			b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
			if len(body) > 0 {
				b.WriteString(itoaHex(len(body)) + "\r\n" + string(body) + "\r\n")
			}
			b.WriteString("0\r\n\r\n")
		} else {
			b.WriteString("Content-Length: " + itoa(len(body)) + "\r\n\r\n" + string(body))
		}
		b.WriteString("HTTP/1.1 200 OK\r\n")
		checkReplyHead(t, []byte(b.String()))
	})
}

func itoa(n int) string    { return strconv.Itoa(n) }
func itoaHex(n int) string { return strconv.FormatInt(int64(n), 16) }

// validKey takes a byte exactly when RFC 9110's token does.
func TestValidKeyBytes(t *testing.T) {
	const tchar = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	for c := range 256 {
		want := strings.IndexByte(tchar, byte(c)) >= 0
		if got := validKey([]byte{byte(c)}); got != want {
			t.Errorf("byte %#x: %v, want %v", c, got, want)
		}
	}
	if validKey(nil) {
		t.Error("an empty name taken")
	}
}

// BenchmarkReplyHead is a loopback benchmark's reply read to its end
// (routerload's fake backend's: net/http's server, Content-Length): by
// parseReplyHead and lengthBody ("plain"), and by http.ReadResponse
// ("readresponse"), as the inline transport read every reply before
// session 12.
func BenchmarkReplyHead(b *testing.B) {
	reply := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nDate: Fri, 27 Nov 2026 16:00:00 GMT\r\nContent-Length: 9\r\n\r\ndata: x\n\n")
	var src bytes.Reader
	br := bufio.NewReaderSize(&src, 4<<10)
	var sink [64]byte
	b.Run("reader=plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			src.Reset(reply)
			br.Reset(&src)
			_, _ = br.Peek(1)
			buf, _ := br.Peek(br.Buffered())
			h, n, ok := parseReplyHead(buf)
			if !ok {
				b.Fatal("not taken")
			}
			_, _ = br.Discard(n)
			body := lengthBody{r: br, n: h.length}
			if _, err := body.Read(sink[:]); err != io.EOF {
				b.Fatal(err)
			}
		}
	})
	b.Run("reader=readresponse", func(b *testing.B) {
		req := &http.Request{Method: http.MethodPost}
		b.ReportAllocs()
		for b.Loop() {
			src.Reset(reply)
			br.Reset(&src)
			resp, err := http.ReadResponse(br, req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := resp.Body.Read(sink[:]); err != io.EOF {
				b.Fatal(err)
			}
		}
	})
}

// The replies net/http's server writes (a stream flushed event by event,
// chunked; a whole answer, with its length; an error) are in the plain
// form: a generation's reply from a pitstop or Go backend never goes to
// http.ReadResponse.
func TestReplyHeadTakesNetHTTPReplies(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/stream":
			w.Header().Set("Content-Type", "text/event-stream")
			for _, e := range strings.SplitAfter(testutil.CannedReply, "\n\n") {
				_, _ = io.WriteString(w, e)
				w.(http.Flusher).Flush()
			}
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"choices":[]}`)
		default:
			http.Error(w, `{"error":{"message":"busy"}}`, http.StatusServiceUnavailable)
		}
	}))
	defer s.Close()
	for _, path := range []string{"/stream", "/json", "/error"} {
		c, err := net.Dial("tcp", s.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(c, "POST "+path+" HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
		data, err := io.ReadAll(c)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !checkReplyHead(t, data) {
			t.Errorf("%s: net/http's reply left to http.ReadResponse: %q", path, data)
		}
	}
}
