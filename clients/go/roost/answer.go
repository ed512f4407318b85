package roost

import (
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	roostv1 "roost.dev/gen/go/roost/v1"
)

// readMultiGetAnswer reads a MultiGet answer in either of its forms
// (lookup.proto: one GetResponse per key, or the packed form) and calls
// emit(i, found, value) for each of the request's keys, i rising from 0,
// after the whole answer has been checked: emit is called for every key or
// for none. Every inconsistency is DataLoss naming it, never a value cut
// from the wrong place. The values are slices of the response's bytes.
func readMultiGetAnswer(r *roostv1.MultiGetResponse, keys int, emit func(i int, found bool, value []byte)) error {
	packed := len(r.PackedSizes) > 0 || r.PackedWidth > 0 || len(r.PackedValues) > 0 || len(r.Missing) > 0
	if !packed {
		if len(r.Results) != keys {
			return malformed("%d results for %d keys", len(r.Results), keys)
		}
		for i, res := range r.Results {
			emit(i, res.Found, res.Value)
		}
		return nil
	}
	if len(r.Results) > 0 {
		return malformed("results in both forms at once")
	}
	last := int64(-1)
	for _, i := range r.Missing {
		if int64(i) <= last || int(i) >= keys {
			if int(i) >= keys {
				return malformed("it names key %d missing, of %d keys", i, keys)
			}
			return malformed("it names key %d missing, out of order", i)
		}
		last = int64(i)
	}
	data := r.PackedValues
	isMissing := func(next *int, i int) bool {
		if *next < len(r.Missing) && int(r.Missing[*next]) == i {
			*next++
			return true
		}
		return false
	}
	if width := uint64(r.PackedWidth); width > 0 {
		found := uint64(keys - len(r.Missing))
		if len(r.PackedSizes) > 0 || found*width != uint64(len(data)) {
			return malformed("the packed values are %d bytes, where %d values of %d were expected", len(data), found, width)
		}
		next, offset := 0, uint64(0)
		for i := 0; i < keys; i++ {
			if isMissing(&next, i) {
				emit(i, false, nil)
				continue
			}
			emit(i, true, data[offset:offset+width:offset+width])
			offset += width
		}
		return nil
	}
	if len(r.PackedSizes) != keys {
		return malformed("%d sizes for %d keys", len(r.PackedSizes), keys)
	}
	total := uint64(0)
	for _, s := range r.PackedSizes {
		total += uint64(s)
	}
	if total != uint64(len(data)) {
		return malformed("the packed values are %d bytes, their sizes add up to %d", len(data), total)
	}
	for _, i := range r.Missing {
		if r.PackedSizes[i] != 0 {
			return malformed("key %d is missing with a value", i)
		}
	}
	next, offset := 0, uint64(0)
	for i := 0; i < keys; i++ {
		size := uint64(r.PackedSizes[i])
		found := !isMissing(&next, i)
		emit(i, found, data[offset:offset+size:offset+size])
		offset += size
	}
	return nil
}

func malformed(format string, args ...any) error {
	return status.Error(codes.DataLoss, "malformed MultiGet answer: "+fmt.Sprintf(format, args...))
}
