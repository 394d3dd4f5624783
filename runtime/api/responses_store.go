package api

import (
	"sync"

	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/runtime"
)

// storedResponse is a response kept for GET and previous_response_id: its
// JSON object and the conversation up to and including its output.
type storedResponse struct {
	obj          *responseObject
	conversation []chat.Message
	program      string         // the chain's program: the first response's id
	input        []chat.Message // this request's input (GET .../input_items)
	// A background response while it runs: its call, and done closed once
	// its final object is stored.
	call *runtime.Call
	done chan struct{}
}

// responseStore keeps responses per tenant: a tenant never reads, chains
// on or deletes another's. It holds at most max responses per tenant,
// dropping the oldest.
type responseStore struct {
	mu     sync.Mutex
	max    int
	byTen  map[string]map[string]*storedResponse
	orders map[string][]string
}

func newResponseStore(max int) *responseStore {
	return &responseStore{max: max, byTen: map[string]map[string]*storedResponse{}, orders: map[string][]string{}}
}

func (s *responseStore) put(tenant, id string, r *storedResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.byTen[tenant]
	if m == nil {
		m = map[string]*storedResponse{}
		s.byTen[tenant] = m
	}
	if _, ok := m[id]; ok { // a background response's final object
		m[id] = r
		return
	}
	for len(s.orders[tenant]) >= s.max {
		delete(m, s.orders[tenant][0])
		s.orders[tenant] = s.orders[tenant][1:]
	}
	m[id] = r
	s.orders[tenant] = append(s.orders[tenant], id)
}

func (s *responseStore) get(tenant, id string) (*storedResponse, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byTen[tenant][id]
	return r, ok
}

func (s *responseStore) remove(tenant, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byTen[tenant][id]; !ok {
		return false
	}
	delete(s.byTen[tenant], id)
	order := s.orders[tenant]
	for i, x := range order {
		if x == id {
			s.orders[tenant] = append(order[:i:i], order[i+1:]...)
			break
		}
	}
	return true
}
