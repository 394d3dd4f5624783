package remote

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
)

// postTemplate is a backend's generation request as (*http.Request).Write
// writes it, split once around its one varying header, so that the inline
// transport writes a generation's request from bytes made once: the
// request line, Host and User-Agent (head), Content-Length, the
// backend's fixed headers in Write's (sorted) order (fixed), the call's
// program headers, the body. The bytes on the wire are Write's
// (TestPostMatchesRequestWrite, FuzzPostMatchesRequestWrite); what they
// spare a call is the *http.Request, its context copy, its body's reader
// and Write's own work (eleven allocations, session 12 in
// docs/results-router.md §4).
type postTemplate struct {
	head, fixed []byte
}

// contentLength0 is the header Write gives a POST without a body.
const contentLength0 = "Content-Length: 0\r\n"

// newPostTemplate has net/http write the request once, without a body.
// Every fixed header must sort before the program headers, which come
// after them on the wire.
func newPostTemplate(u *url.URL, h http.Header) (postTemplate, error) {
	for k := range h {
		if k >= headerProgram {
			return postTemplate{}, fmt.Errorf("header %q sorts after %s", k, headerProgram)
		}
	}
	var buf bytes.Buffer
	req := &http.Request{Method: http.MethodPost, URL: u, Host: u.Host, Header: h, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	if err := req.Write(&buf); err != nil {
		return postTemplate{}, err
	}
	head, fixed, ok := bytes.Cut(buf.Bytes(), []byte(contentLength0))
	if !ok || bytes.Contains(fixed, []byte(contentLength0)) || !bytes.HasSuffix(fixed, []byte("\r\n")) {
		return postTemplate{}, fmt.Errorf("unexpected request head %q", buf.Bytes())
	}
	return postTemplate{head: head, fixed: fixed[:len(fixed)-2]}, nil // without the blank line
}

// postRequest is one generation's request: the template's bytes, the
// call's program headers (empty: not sent) and its body.
type postRequest struct {
	t               *postTemplate
	program, thread string
	body            []byte
}

// write writes p as (*http.Request).Write would.
func (p *postRequest) write(w *bufio.Writer) error {
	w.Write(p.t.head)
	w.WriteString("Content-Length: ")
	writeInt(w, len(p.body))
	w.WriteString("\r\n")
	w.Write(p.t.fixed)
	if p.program != "" {
		writeHeader(w, headerProgram, p.program)
		if p.thread != "" {
			writeHeader(w, headerThread, p.thread)
		}
	}
	w.WriteString("\r\n")
	_, err := w.Write(p.body)
	return err
}

// writeInt writes n (≥ 0) in decimal, byte by byte: digits made in a
// local array and handed to Write would escape (an allocation a call).
func writeInt(w *bufio.Writer, n int) {
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	for _, c := range d[i:] {
		w.WriteByte(c)
	}
}

// writeHeader writes a header line as http.Header.Write does: a line
// break in the value becomes a space, and the value is trimmed.
func writeHeader(w *bufio.Writer, key, v string) {
	if strings.ContainsAny(v, "\r\n") {
		v = strings.NewReplacer("\n", " ", "\r", " ").Replace(v)
	}
	w.WriteString(key)
	w.WriteString(": ")
	w.WriteString(textproto.TrimString(v))
	w.WriteString("\r\n")
}
