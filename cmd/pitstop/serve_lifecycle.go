package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/pitstop-llm/pitstop/predictor"
	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/api"
)

// lifecycleFlags are serve's flags on the HTTP server's life around the
// handlers: how slowly a body may arrive and how the server ends.
type lifecycleFlags struct {
	readTimeout   time.Duration
	shutdownGrace time.Duration
}

// defaultShutdownGrace is --shutdown-grace's default: time enough to write
// a final event to a client that is still reading.
const defaultShutdownGrace = 2 * time.Second

func addLifecycleFlags(fl *pflag.FlagSet, f *lifecycleFlags) {
	f.readTimeout, f.shutdownGrace = api.DefaultBodyReadTimeout, defaultShutdownGrace
	fl.Var(positiveDuration{&f.readTimeout}, "read-timeout",
		"longest pause within a request body; the whole body must also average 16 KiB/s beyond this (a slower body gets 408)")
	fl.Var(positiveDuration{&f.shutdownGrace}, "shutdown-grace",
		"after --shutdown-timeout ended the calls still in flight, how long their clients have to take the final error before the connections are closed")
}

// positiveDuration is a duration flag that refuses zero and negative
// values when it is parsed (a usage error, exit status 2).
type positiveDuration struct{ d *time.Duration }

func (p positiveDuration) String() string {
	if p.d == nil {
		return "0s"
	}
	return p.d.String()
}

func (p positiveDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration (e.g. 15s, 500ms)")
	}
	if d <= 0 {
		return fmt.Errorf("must be positive")
	}
	*p.d = d
	return nil
}

func (p positiveDuration) Type() string { return "duration" }

// serveUntilSignal serves h on ln until SIGINT or SIGTERM, then shuts down
// (drainHTTP), saves the tool-duration statistics and returns nil unless
// something failed: the shutdown timeout ending calls is not a failure. A
// second signal during the shutdown ends the process at once.
func serveUntilSignal(ln net.Listener, h http.Handler, rt *runtime.Runtime, f serveFlags, durations *predictor.DurationEstimator, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	saveDurations := func() error {
		if f.durationsPath == "" {
			return nil
		}
		if err := durations.Save(f.durationsPath); err != nil {
			return fmt.Errorf("saving tool-duration statistics to %s: %w", f.durationsPath, err)
		}
		return nil
	}
	if f.durationsPath != "" && f.saveInterval > 0 {
		go func() {
			t := time.NewTicker(f.saveInterval)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					if err := saveDurations(); err != nil {
						log.Warn("periodic save", "err", err)
					}
				}
			}
		}()
	}
	hs := &http.Server{
		Handler:           api.GuardBodies(h, f.readTimeout),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	err := drainHTTP(ctx, stop, hs, ln, rt.Close, f.shutdownTimeout, f.shutdownGrace, log)
	return errors.Join(err, saveDurations())
}

// drainHTTP serves on ln until ctx ends, then shuts the server down in
// three steps:
//
//  1. it stops accepting and lets the calls in flight finish, for up to
//     timeout;
//  2. then it closes the runtime, which fails the calls still unfinished
//     with server_shutting_down: a stream ends with an error event and
//     [DONE], a non-stream call gets its 503;
//  3. a client that does not take that last response within grace (it
//     stopped reading, so the handler's write blocks) has its connection
//     closed, which ends the write.
//
// It returns the runtime's or the listener's failure, nil after a
// shutdown however it ended. stop is called once the shutdown begins.
func drainHTTP(ctx context.Context, stop func(), hs *http.Server, ln net.Listener, closeRuntime func() error,
	timeout, grace time.Duration, log *slog.Logger) error {
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return errors.Join(fmt.Errorf("serving on %s: %w", ln.Addr(), err), closeRuntime())
	case <-ctx.Done():
	}
	stop()
	log.Info("shutting down: no new connections; calls in flight may finish", "timeout", timeout)
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	drained := make(chan struct{})
	go func() {
		_ = hs.Shutdown(sctx) // returns once every connection is idle or closed (or at cancel)
		close(drained)
	}()
	var err error
	select {
	case <-drained:
		err = closeRuntime()
	case <-time.After(timeout):
		log.Warn("shutdown timeout: ending the calls still in flight", "timeout", timeout)
		err = closeRuntime()
		select {
		case <-drained:
		case <-time.After(grace):
			log.Warn("closing the connections whose clients did not take their last response", "grace", grace)
			_ = hs.Close() // ends the blocked writes; its error would be the listeners', which Shutdown closed
		}
	}
	<-served // http.ErrServerClosed, once Shutdown or Close began
	return err
}
