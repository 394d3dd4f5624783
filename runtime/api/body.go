package api

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/labstack/echo/v4"
)

// Request bodies are read under a deadline so that a client cannot hold a
// connection and its handler by trickling a body in. http.Server's
// ReadTimeout bounds the whole request however fast it arrives, so a large
// body on a slow but steady link would fail; the deadline here is set on the
// request's connection (http.ResponseController), moves with the body's
// progress, and is cleared once the body is read, so that a stream written
// after it is never cut by it.

// DefaultBodyReadTimeout is Config.BodyReadTimeout's default.
const DefaultBodyReadTimeout = 15 * time.Second

// minBodyRate, in bytes per second, is the average rate a body must keep
// beyond its first timeout (128 kbit/s; the default 8 MiB limit then
// allows about 9 minutes).
const minBodyRate = 16 << 10

// bodyDeadline is the read deadline rule of one request body: the body may
// pause at most timeout between reads, and all of it must have arrived
// within timeout plus its size at minBodyRate. A body trickling in one byte
// a second thus ends after about timeout, however long it would be.
type bodyDeadline struct {
	rc      *http.ResponseController
	timeout time.Duration
	start   time.Time
	got     int64 // bytes read so far
}

// startBodyDeadline arms the deadline of the body of the request w answers;
// it returns nil when w's connection has no deadlines (then the body is
// read without one).
func startBodyDeadline(w http.ResponseWriter, timeout time.Duration) *bodyDeadline {
	d := &bodyDeadline{rc: http.NewResponseController(w), timeout: timeout, start: time.Now()}
	if d.rc.SetReadDeadline(d.next(d.start)) != nil {
		return nil
	}
	return d
}

// next is the deadline after a read at now.
func (d *bodyDeadline) next(now time.Time) time.Time {
	pause := now.Add(d.timeout)
	total := d.start.Add(d.timeout + time.Duration(float64(d.got)/minBodyRate*float64(time.Second)))
	if total.Before(pause) {
		return total
	}
	return pause
}

// reader reads r, moving the deadline after every read that made progress.
func (d *bodyDeadline) reader(r io.ReadCloser) io.ReadCloser {
	if d == nil {
		return r
	}
	return &deadlineReader{ReadCloser: r, d: d}
}

// clear lifts the deadline once the body is read: the connection's next
// reads belong to net/http (a closed-connection watch while the response
// is written, the next request with its own header timeout).
func (d *bodyDeadline) clear() {
	if d != nil {
		_ = d.rc.SetReadDeadline(time.Time{}) // it was set on this connection before, so it can be again
	}
}

type deadlineReader struct {
	io.ReadCloser
	d *bodyDeadline
}

func (r *deadlineReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if n > 0 {
		r.d.got += int64(n)
		_ = r.d.rc.SetReadDeadline(r.d.next(time.Now())) // as in clear
	}
	return n, err
}

// bodyTimeout is the configured body read timeout.
func (s *Server) bodyTimeout() time.Duration {
	if s.cfg.BodyReadTimeout > 0 {
		return s.cfg.BodyReadTimeout
	}
	return DefaultBodyReadTimeout
}

// readBody reads a request body within the size limit and the read
// deadline. On failure the connection closes after the error is answered:
// what is left of the body is not read (the deadline stays armed, so
// net/http's own drain of it ends at the deadline at the latest).
func (s *Server) readBody(c echo.Context) ([]byte, *APIError) {
	req := c.Request()
	start, timeout := time.Now(), s.bodyTimeout()
	d := startBodyDeadline(c.Response(), timeout)
	if req.ContentLength > s.cfg.MaxBodyBytes {
		c.Response().Header().Set(echo.HeaderConnection, "close")
		return nil, newError(http.StatusRequestEntityTooLarge, typeInvalidRequest, "", "request_too_large",
			"Request body of %d bytes is larger than the limit of %d bytes.", req.ContentLength, s.cfg.MaxBodyBytes)
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), d.reader(req.Body), s.cfg.MaxBodyBytes))
	if err != nil {
		c.Response().Header().Set(echo.HeaderConnection, "close")
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return nil, newError(http.StatusRequestEntityTooLarge, typeInvalidRequest, "", "request_too_large",
				"Request body is larger than the limit of %d bytes.", s.cfg.MaxBodyBytes)
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, newError(http.StatusRequestTimeout, typeInvalidRequest, "", "request_timeout",
				"The request body arrived too slowly: %d bytes in %v. A body may pause at most %v and must average %d KiB/s beyond that.",
				len(body), time.Since(start).Round(time.Millisecond), timeout, minBodyRate>>10)
		}
		return nil, invalid("", "invalid_body", "Could not read the request body: %v", err)
	}
	d.clear()
	return body, nil
}

// GuardBodies arms the body read deadline (timeout, with readBody's rule)
// of every request that has a body before next runs. readBody re-arms and
// clears it as it reads; a body that no handler reads (an authentication
// failure, an unknown route) is otherwise drained by net/http after the
// response with no deadline at all, so a trickle would hold the connection.
func GuardBodies(next http.Handler, timeout time.Duration) http.Handler {
	if timeout <= 0 {
		timeout = DefaultBodyReadTimeout
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			startBodyDeadline(w, timeout)
		}
		next.ServeHTTP(w, r)
	})
}
