package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// BenchmarkHTTPServer is what net/http's server costs per request on
// loopback, one keep-alive call at a time, with the options serve can
// set, against a handler that reads a small body and writes a short
// reply (no router): "bare" is http.Server's defaults; "timeouts" adds
// serve's ReadHeaderTimeout and IdleTimeout (a read deadline set per
// request); "bodies" adds GuardBodies and readBody's body deadline as
// serve runs them. The client's work is in every figure alike: the
// differences are the options'.
func BenchmarkHTTPServer(b *testing.B) {
	for _, v := range []string{"bare", "timeouts", "bodies"} {
		b.Run(v, func(b *testing.B) {
			var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"ok":true}`)
			})
			if v == "bodies" {
				h = GuardBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					d := startBodyDeadline(w, DefaultBodyReadTimeout)
					_, _ = io.ReadAll(http.MaxBytesReader(w, d.reader(r.Body), 8<<20))
					d.clear()
					w.Header().Set("Content-Type", "application/json")
					_, _ = io.WriteString(w, `{"ok":true}`)
				}), DefaultBodyReadTimeout)
			}
			ts := httptest.NewUnstartedServer(h)
			if v != "bare" {
				ts.Config.ReadHeaderTimeout, ts.Config.IdleTimeout = 10*time.Second, 2*time.Minute
			}
			ts.Start()
			defer ts.Close()
			client := ts.Client()
			body := `{"model":"m","messages":[{"role":"user","content":"call-1"}]}`
			call := func() {
				resp, err := client.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			timeCalls(b, call)
		})
	}
}
