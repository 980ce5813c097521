// Package eventsmap reads the programs' events ring buffer: drop and
// policy-verdict records decoded into Event values, which the monitor
// streams to `apiary monitor`.
package eventsmap
