package tools

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// fakeDNS answers the Go resolver from a table, in memory: no query
// leaves the process. Names not in the table are NXDOMAIN. It records the
// names it was asked.
type fakeDNS struct {
	t       *testing.T
	answers map[string][]netip.Addr
	mu      sync.Mutex
	asked   []string
}

// resolver returns a Go resolver that asks d.
func (d *fakeDNS) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		client, server := net.Pipe() // a stream: the resolver frames messages as over TCP
		go d.serve(server)
		return client, nil
	}}
}

func (d *fakeDNS) askedFor(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range d.asked {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

func (d *fakeDNS) serve(c net.Conn) {
	defer c.Close()
	for {
		var n uint16
		if err := binary.Read(c, binary.BigEndian, &n); err != nil {
			return
		}
		msg := make([]byte, n)
		if _, err := io.ReadFull(c, msg); err != nil {
			return
		}
		out, err := d.answer(msg)
		if err != nil {
			d.t.Errorf("fake DNS: %v", err)
			return
		}
		if err := binary.Write(c, binary.BigEndian, uint16(len(out))); err != nil {
			return
		}
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

func (d *fakeDNS) answer(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(q.Name.String(), ".")
	d.mu.Lock()
	d.asked = append(d.asked, name)
	d.mu.Unlock()
	addrs, known := d.answers[strings.ToLower(name)]
	rcode := dnsmessage.RCodeSuccess
	if !known {
		rcode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true, RCode: rcode})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 1}
	for _, a := range addrs {
		switch {
		case q.Type == dnsmessage.TypeA && a.Is4():
			err = b.AResource(rh, dnsmessage.AResource{A: a.As4()})
		case q.Type == dnsmessage.TypeAAAA && a.Is6():
			err = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
		if err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
