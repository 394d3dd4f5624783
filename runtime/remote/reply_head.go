package remote

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http/httputil"
	"net/textproto"
)

// replyHead is what a generation needs of its reply's status line and
// headers: the status, whether the body is JSON (not a stream), how the
// body ends and whether the connection is kept.
type replyHead struct {
	status  int
	json    bool  // Content-Type starts application/json
	length  int64 // Content-Length; -1 when chunked
	chunked bool
	close   bool // Connection: close
}

// parseReplyHead reads a reply's head from buf (the bytes buffered so
// far) when it is in the plain form servers write: HTTP/1.1, a status of
// 200–599 but 204 and 304, CRLF line ends, no folded or malformed line,
// a body framed by one Content-Length or one Transfer-Encoding: chunked,
// at most one Connection header, close or keep-alive, no Trailer header.
// It returns the head and its length, or ok false for anything else (or a
// head not yet all in buf), which http.ReadResponse then reads: the
// inline transport's post takes what it reads here without the map of
// every header, the strings of their values and the *http.Response that
// http.ReadResponse makes (ten allocations a call with its body's, session 12 in
// docs/results-router.md §4). FuzzReplyHead holds every head it takes
// to http.ReadResponse's reading of the same bytes, body included.
func parseReplyHead(buf []byte) (h replyHead, n int, ok bool) {
	line, rest, ok := cutLine(buf)
	if !ok || len(line) < 12 || string(line[:9]) != "HTTP/1.1 " || (len(line) > 12 && line[12] != ' ') {
		return h, 0, false
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return h, 0, false
		}
		h.status = h.status*10 + int(c-'0')
	}
	if h.status < 200 || h.status == 204 || h.status == 304 || !validValue(line[12:]) {
		return h, 0, false
	}
	h.length = -1
	sawType, sawLength, sawEncoding, sawConnection := false, false, false, false
	for {
		if line, rest, ok = cutLine(rest); !ok {
			return h, 0, false
		}
		if len(line) == 0 {
			break
		}
		k, v, found := bytes.Cut(line, []byte(":"))
		if !found || !validKey(k) || !validValue(v) {
			return h, 0, false
		}
		v = bytes.Trim(v, " \t")
		switch {
		case asciiEqualFold(k, "Content-Type"):
			if !sawType {
				sawType, h.json = true, bytes.HasPrefix(v, []byte("application/json"))
			}
		case asciiEqualFold(k, "Content-Length"):
			if sawLength || len(v) == 0 || len(v) > 18 {
				return h, 0, false
			}
			sawLength, h.length = true, 0
			for _, c := range v {
				if c < '0' || c > '9' {
					return h, 0, false
				}
				h.length = h.length*10 + int64(c-'0')
			}
		case asciiEqualFold(k, "Transfer-Encoding"):
			if sawEncoding || !asciiEqualFold(v, "chunked") {
				return h, 0, false
			}
			sawEncoding, h.chunked = true, true
		case asciiEqualFold(k, "Connection"):
			if sawConnection {
				return h, 0, false
			}
			sawConnection = true
			switch {
			case asciiEqualFold(v, "close"):
				h.close = true
			case !asciiEqualFold(v, "keep-alive"):
				return h, 0, false
			}
		case asciiEqualFold(k, "Trailer"):
			return h, 0, false
		}
	}
	if sawLength == sawEncoding { // neither (read to the close) or both
		return h, 0, false
	}
	return h, len(buf) - len(rest), true
}

// cutLine cuts buf's first line, ended by CRLF (a bare LF or CR: not ok).
func cutLine(buf []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(buf, '\n')
	if i < 1 || buf[i-1] != '\r' {
		return nil, nil, false
	}
	line = buf[:i-1]
	if bytes.IndexByte(line, '\r') >= 0 {
		return nil, nil, false
	}
	return line, buf[i+1:], true
}

// validKey reports a header name of token characters (RFC 9110 §5.1),
// which is what textproto takes: a bit per byte below 128 in two words.
func validKey(k []byte) bool {
	const (
		lo = (1<<10-1)<<'0' | 1<<'!' | 1<<'#' | 1<<'$' | 1<<'%' | 1<<'&' | 1<<'\'' | 1<<'*' | 1<<'+' | 1<<'-' | 1<<'.'
		hi = (1<<26-1)<<('A'-64) | (1<<26-1)<<('a'-64) | 1<<('^'-64) | 1<<('_'-64) | 1<<('`'-64) | 1<<('|'-64) | 1<<('~'-64)
	)
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		var bit uint64
		switch {
		case c < 64:
			bit = uint64(lo) >> c & 1
		case c < 128:
			bit = uint64(hi) >> (c - 64) & 1
		}
		if bit == 0 {
			return false
		}
	}
	return true
}

// validValue reports a value without control characters but tab (obs-text
// taken), as textproto's check.
func validValue(v []byte) bool {
	for _, c := range v {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// lengthBody is a body of Content-Length bytes, read as net/http's body
// reads one: io.EOF with its last bytes (the connection is reused at
// once), io.ErrUnexpectedEOF for a connection that ends before them.
type lengthBody struct {
	r *bufio.Reader
	n int64
}

func (b *lengthBody) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	switch {
	case b.n == 0:
		err = io.EOF
	case err == io.EOF:
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (b *lengthBody) Close() error { return nil }

func newChunkedBody(r *bufio.Reader) chunkedBody {
	return chunkedBody{r: r, cr: httputil.NewChunkedReader(r)}
}

// chunkedBody is a chunked body, decoded by net/http's own chunked reader
// (httputil.NewChunkedReader), its trailer read at its end as net/http's
// body reads it (and dropped: a generation has no use for one).
type chunkedBody struct {
	r       *bufio.Reader
	cr      io.Reader
	sawEOF  bool
	readErr error
}

var errTrailerEOF = errors.New("http: unexpected EOF reading trailer")

func (b *chunkedBody) Read(p []byte) (int, error) {
	if b.readErr != nil {
		return 0, b.readErr
	}
	if b.sawEOF {
		return 0, io.EOF
	}
	n, err := b.cr.Read(p)
	if err == io.EOF {
		b.sawEOF = true
		if terr := b.readTrailer(); terr != nil {
			b.sawEOF, b.readErr, err = false, terr, terr
		}
	}
	return n, err
}

func (b *chunkedBody) Close() error { return nil }

// readTrailer is net/http's body.readTrailer.
func (b *chunkedBody) readTrailer() error {
	buf, err := b.r.Peek(2)
	if bytes.Equal(buf, []byte("\r\n")) {
		_, _ = b.r.Discard(2)
		return nil
	}
	if len(buf) < 2 {
		return errTrailerEOF
	}
	if err != nil {
		return err
	}
	if !seeUpcomingDoubleCRLF(b.r) {
		return errors.New("http: suspiciously long trailer after chunked body")
	}
	if _, err := textproto.NewReader(b.r).ReadMIMEHeader(); err != nil {
		if err == io.EOF {
			return errTrailerEOF
		}
		return err
	}
	return nil
}

// seeUpcomingDoubleCRLF is net/http's: whether a header's end is within
// the reader's buffer.
func seeUpcomingDoubleCRLF(r *bufio.Reader) bool {
	for peekSize := 4; ; peekSize++ {
		buf, err := r.Peek(peekSize)
		if bytes.HasSuffix(buf, []byte("\r\n\r\n")) {
			return true
		}
		if err != nil {
			break
		}
	}
	return false
}
