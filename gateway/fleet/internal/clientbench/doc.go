// Package clientbench compares the two Redis clients the fleet could use,
// github.com/redis/go-redis/v9 and github.com/redis/rueidis, on the
// operations the fleet makes (see gateway/fleet/doc.go for the figures and
// the choice):
//
//	cd gateway/fleet/internal/clientbench && go test -bench . -benchtime 3000x -count 3
//
// It is a module of its own so that the client not chosen stays out of
// brownout's go.mod.
package clientbench
