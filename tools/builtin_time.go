package tools

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones on machines without a zoneinfo database
)

type currentTimeArgs struct {
	Timezone string `json:"timezone,omitempty" jsonschema:"description=IANA time zone name\\, e.g. Europe/Paris or America/New_York (default UTC)"`
	Format   string `json:"format,omitempty" jsonschema:"description=Output format (default rfc3339),enum=rfc3339,enum=rfc1123,enum=datetime,enum=date,enum=time,enum=unix"`
}

var timeFormats = map[string]string{
	"":         time.RFC3339,
	"rfc3339":  time.RFC3339,
	"rfc1123":  time.RFC1123Z,
	"datetime": "2006-01-02 15:04:05",
	"date":     "2006-01-02",
	"time":     "15:04:05",
}

// NewCurrentTimeTool returns the current_time tool; now is its clock (nil:
// time.Now).
func NewCurrentTimeTool(now func() time.Time) (*Tool, error) {
	if now == nil {
		now = time.Now
	}
	return Func(CurrentTimeTool,
		"Get the current date and time in a time zone.",
		func(_ context.Context, a currentTimeArgs) (string, error) {
			loc, err := loadZone(a.Timezone)
			if err != nil {
				return "", err
			}
			t := now().In(loc)
			if a.Format == "unix" {
				return strconv.FormatInt(t.Unix(), 10), nil
			}
			layout, ok := timeFormats[a.Format]
			if !ok {
				return "", fmt.Errorf("unknown format %q", a.Format)
			}
			return fmt.Sprintf("%s (%s, %s)", t.Format(layout), t.Weekday(), loc), nil
		})
}

// loadZone resolves an IANA zone name; "" is UTC and the server's "Local"
// zone is refused (it says nothing to the model and leaks the host's).
func loadZone(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	switch strings.ToUpper(name) {
	case "", "UTC", "GMT", "Z", "ETC/UTC":
		return time.UTC, nil
	case "LOCAL":
		return nil, fmt.Errorf(`time zone "Local" is not accepted; give an IANA name such as Europe/Paris`)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q; give an IANA name such as Europe/Paris, America/New_York or UTC", name)
	}
	return loc, nil
}
