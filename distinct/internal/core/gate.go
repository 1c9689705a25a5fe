package core

import "context"

// signal is a broadcast channel that is closed and replaced on every change,
// the Go form of a completed-and-replaced promise. The channel is made only
// when somebody waits, so a change that wakes nobody allocates nothing.
// Its methods need the queue's mutex.
type signal struct{ ch chan struct{} }

// waitLocked returns a channel that is closed at the next broadcast.
func (s *signal) waitLocked() <-chan struct{} {
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// broadcastLocked wakes everybody waiting.
func (s *signal) broadcastLocked() {
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// The gate is a read/write semaphore over the queue's state, made of q.mu and
// two counters. A writer holds q.mu for the whole of its (short, bounded)
// update, once no reader is active. A reader holds no lock while it reads: it
// registers in q.readers, which keeps writers out, reads, and deregisters, so
// snapshots of a long queue run in parallel with each other. A writer that
// finds readers registers in q.writers and waits; while it waits no new reader
// is admitted, so readers cannot starve it. Waits are on channels; those for
// items or room honour a context, and the wait for readers, which is
// bounded, does not, so that a done context never fails a call that need
// not wait for items or room.

// lock acquires the write side: on return q.mu is held and no reader is
// active. The wait for readers is bounded: no reader is admitted while a
// writer waits, and a reader holds the gate for one snapshot.
func (q *Queue[T]) lock() {
	q.mu.Lock()
	if q.readers != 0 || q.takeTurn == nil {
		q.lockSlow()
	}
}

// lockSlow finishes lock, with q.mu held: it sets up a zero Queue and waits
// for readers to leave.
func (q *Queue[T]) lockSlow() {
	if q.takeTurn == nil {
		q.initLocked()
	}
	if q.readers == 0 {
		return
	}
	q.writers++
	for q.readers > 0 {
		wake := q.noReaders.waitLocked()
		q.mu.Unlock()
		<-wake
		q.mu.Lock()
	}
	q.leaveWritersLocked()
}

func (q *Queue[T]) leaveWritersLocked() {
	q.writers--
	if q.writers == 0 {
		q.noWriters.broadcastLocked()
	}
}

// rlock acquires the read side: until runlock, no writer changes the queue.
// It waits while a writer is waiting.
func (q *Queue[T]) rlock() {
	q.mu.Lock()
	for q.writers > 0 {
		wake := q.noWriters.waitLocked()
		q.mu.Unlock()
		<-wake
		q.mu.Lock()
	}
	q.readers++
	q.mu.Unlock()
}

func (q *Queue[T]) runlock() {
	q.mu.Lock()
	q.readers--
	if q.readers == 0 {
		q.noReaders.broadcastLocked()
	}
	q.mu.Unlock()
}

// await calls try under the write lock until it reports done, and between
// tries waits for sig. Waiters line up on *turn (a channel of capacity one),
// so that only the first of them waits on sig and one broadcast wakes one
// waiter, not a herd; a nil turn lets every waiter wait on sig. Cancelling ctx
// while waiting returns ctx's error with nothing changed.
func (q *Queue[T]) await(ctx context.Context, turn *chan struct{}, sig *signal, try func() (done bool, err error)) error {
	var held chan struct{} // the turn, once this waiter holds it
	defer func() {
		if held != nil {
			<-held
		}
	}()
	for {
		q.lock()
		if done, err := try(); done || err != nil {
			q.mu.Unlock()
			return err
		}
		if turn != nil && held == nil {
			t := *turn // set by initLocked, which lock ran
			q.mu.Unlock()
			select {
			case t <- struct{}{}:
				held = t
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		wake := sig.waitLocked()
		q.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
