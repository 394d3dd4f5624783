package main

import (
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/pitstop-llm/pitstop/runtime/api"
	"github.com/pitstop-llm/pitstop/tools"
)

// webhookPolicy is the egress rule of webhook tools: with API keys or a
// listen address beyond loopback the server faces people it does not trust,
// so webhooks reach only public addresses and the CIDRs of --webhook-allow;
// an open server on loopback is a developer's and may reach anything (its
// tool servers are usually local), unless --webhook-public-only.
func webhookPolicy(f serveFlags, hasKeys bool) (*tools.DialPolicy, error) {
	allow, err := tools.ParseAllowList(strings.Join(f.webhookAllow, ","))
	if err != nil {
		return nil, usagef("--webhook-allow: %v", err)
	}
	if !hasKeys && loopbackAddr(f.addr) && !f.webhookPublicOnly {
		return nil, nil
	}
	return &tools.DialPolicy{Allow: allow}, nil
}

// reloadKeysOnHUP reloads the keys file on SIGHUP: calls in flight go on,
// the next requests use the new keys and limits; a file that does not parse
// keeps the old keys (logged). The returned function stops listening.
func reloadKeysOnHUP(f serveFlags, srv *api.Server, log *slog.Logger) func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-hup:
				keys, err := api.LoadAPIKeys(f.apiKeys, f.adminKeys, f.apiKeysFile)
				if err == nil {
					err = srv.ReloadKeys(keys)
				}
				if err != nil {
					log.Error("reloading API keys failed; the old keys stay", "file", f.apiKeysFile, "err", err)
					continue
				}
				log.Info("reloaded API keys", "file", f.apiKeysFile, "keys", keys.Len(), "tenants", len(keys.Tenants()))
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
	}
}
