package report

// SetClass names the class of a program (the tenant of a multi-tenant
// run) before its first call arrives: its calls' latencies are split by
// class in Run.ByClass. Programs without one are left out of it.
func (c *Collector) SetClass(program, class string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.progClass == nil {
		c.progClass = make(map[string]string)
	}
	c.progClass[program] = class
}

// addClass records a call finished at t under its program's class.
func (c *Collector) addClass(r *callRec, t float64) {
	addLabelled(&c.byClass, r.class, r, t)
}
