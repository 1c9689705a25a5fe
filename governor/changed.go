package governor

// closedChan is the channel Changed returns after Stop.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Changed returns a channel that is closed at the next change that may let
// refused work in: a sample is applied (good or failed), the reading goes
// stale because the Sampler is late, a Permit is released, or Stop is
// called. After Stop it returns a closed channel. Calls between two changes
// return the same channel.
//
// A scheduler whose TryAcquire was refused can wait on it instead of polling.
// To miss no change, it takes the channel before it tries:
//
//	for {
//		changed := g.Changed()
//		if p, ok := g.TryAcquire(key, w); ok {
//			return p
//		}
//		<-changed // or a select with the scheduler's own context
//	}
//
// Changed costs nothing while nobody has asked: the Governor then notices no
// one. Once a channel is out, the next Release takes the Governor's lock to
// close it.
func (g *Governor) Changed() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.isStopped {
		return closedChan
	}
	if g.changed == nil {
		g.changed = make(chan struct{})
		g.gate.Add(gateWatch)
	}
	return g.changed
}

// notifyLocked closes the channel Changed handed out, if any.
func (g *Governor) notifyLocked() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
		g.gate.Add(-gateWatch)
	}
}
