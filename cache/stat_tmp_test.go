package cache
import ("testing";"fmt";"os")
func TestMain(m *testing.M) { c := m.Run(); g := statGroups.Load(); if g > 0 { fmt.Printf("groups %d reqs %d avg %.1f per group, %.2f ms/commit\n", g, statReqs.Load(), float64(statReqs.Load())/float64(g), float64(statNanos.Load())/float64(g)/1e6) }; os.Exit(c) }
