package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ideaflow/ideaflow/cache"
	"github.com/ideaflow/ideaflow/engine"
)

func TestProfileWarm(t *testing.T) {
	if os.Getenv("PROF") == "" {
		t.Skip()
	}
	dir := os.Getenv("PROFDIR")
	exp := filepath.Join(dir, "exp")
	cacheDir := filepath.Join(dir, "cache")
	fresh := false
	if _, err := os.Stat(exp); err != nil {
		writeScaleExperiment(t, exp, 20, 1200)
		fresh = true
	}
	store, _ := cache.Open(cacheDir)
	defer store.Close()
	g := loadGraph(t, exp)
	e := &engine.Engine{Store: store, Log: zerolog.Nop(), Exec: engine.NewLocalExecutor(g.Exp.LLMProviders(), zerolog.Nop())}
	if fresh {
		f, _ := os.Create("/tmp/cold.prof")
		pprof.StartCPUProfile(f)
		t0 := time.Now()
		e.Run(context.Background(), g, engine.RunOptions{ReportDir: dir + "/res"})
		pprof.StopCPUProfile()
		t.Logf("cold %v", time.Since(t0))
	}
	runtime.SetBlockProfileRate(1000)
	runtime.SetMutexProfileFraction(1)
	defer func() {
		bf, _ := os.Create("/tmp/block.prof")
		pprof.Lookup("block").WriteTo(bf, 0)
		bf.Close()
	}()
	f, _ := os.Create("/tmp/warm.prof")
	pprof.StartCPUProfile(f)
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(0, &ru0)
	t0 := time.Now()
	p := e.Plan(g)
	syscall.Getrusage(0, &ru1)
	t.Logf("cpu user %v sys %v", time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()), time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano()))
	pprof.StopCPUProfile()
	t.Logf("warm plan %v %+v", time.Since(t0), p.Summary.Nodes)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap inuse %d MiB, sys %d MiB", ms.HeapInuse>>20, ms.Sys>>20)
	hf, _ := os.Create("/tmp/heap.prof")
	pprof.WriteHeapProfile(hf)
	hf.Close()
	var ru syscall.Rusage
	syscall.Getrusage(0, &ru)
	t.Logf("maxrss %d MiB", ru.Maxrss>>10)
}
