package runtime

import (
	"fmt"

	"github.com/pitstop-llm/pitstop/models/chat"
)

// OfferTools says which tools a call offers the model (Config.OfferTools).
type OfferTools string

const (
	// OfferDeclared offers the tools the request declares, and only those.
	OfferDeclared OfferTools = "declared"
	// OfferRegistered offers the declared tools and every registered
	// server-side tool the tenant sees.
	OfferRegistered OfferTools = "registered"
)

// ParseOfferTools reads serve's --offer-tools.
func ParseOfferTools(s string) (OfferTools, error) {
	switch OfferTools(s) {
	case "", OfferDeclared:
		return OfferDeclared, nil
	case OfferRegistered:
		return OfferRegistered, nil
	}
	return "", fmt.Errorf("unknown --offer-tools %q (valid: declared, registered)", s)
}

// MaxStop is how many stop sequences a request may give (OpenAI's limit).
const MaxStop = 4

// offerRegistered adds the registered tools the tenant sees that the
// request did not declare; they run server-side.
func (rt *Runtime) offerRegistered(tenant string, offered []chat.Tool, server map[string]bool) ([]chat.Tool, map[string]bool) {
	seen := make(map[string]bool, len(offered))
	for _, t := range offered {
		seen[t.Name] = true
	}
	for _, t := range rt.reg.ListIn(tenant) {
		if seen[t.Name] {
			continue
		}
		if server == nil {
			server = map[string]bool{}
		}
		server[t.Name] = true
		offered = append(offered, chat.Tool{Name: t.Name, Description: t.Description, Parameters: t.Definition().Function.Parameters})
	}
	return offered, server
}
