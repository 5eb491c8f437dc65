package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

// benchGateway is the child side of bench compare --gateway-process: it
// serves one gateway built exactly as the in-process arms build theirs,
// prints "listening ADDR" once the listener is open, and shuts down when
// its standard input closes, so that it never outlives the benchmark that
// started it, however that one ends. It is not `cqlpg serve`, which has
// neither a null backend nor a way to report a port it picked.
func benchGateway(args []string) int {
	fs := flag.NewFlagSet("bench gateway", flag.ContinueOnError)
	var shards stringList
	fs.Var(&shards, "shard", "PostgreSQL `URL` of a shard, repeatable, in ring order")
	conns := fs.Int("conns", 4, "connections to each shard")
	null := fs.Bool("null", false, "answer data statements from memory")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx := context.Background()
	gw, err := serveGateway(ctx, shards, *conns, *null)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cqlpg bench gateway:", err)
		return 1
	}
	fmt.Printf("listening %s\n", gw.Addr())
	io.Copy(io.Discard, os.Stdin)
	shutdown, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	gw.Shutdown(shutdown)
	return 0
}

// serveGateway starts serving a gateway on a free local port with conns
// connections to each of the shards at urls (0 for the gateway's default);
// null answers data statements from memory.
func serveGateway(ctx context.Context, urls []string, conns int, null bool) (*gateway.Server, error) {
	var shards []cluster.ShardConfig
	for _, url := range urls {
		shards = append(shards, cluster.ShardConfig{URL: url})
	}
	return serveGatewayOn(ctx, shards, conns, null)
}

// serveGatewayOn is serveGateway on shards placed in their datacenters
// and racks.
func serveGatewayOn(ctx context.Context, shards []cluster.ShardConfig, conns int, null bool) (*gateway.Server, error) {
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: quietLog(), ShardConns: conns, NullData: null, Shards: shards}
	gw, err := gateway.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	go gw.Serve()
	return gw, nil
}

// benchServer is a gateway of the benchmarks, in this process or in a
// child of its own. pid is the child's, 0 when in process: only a child's
// CPU can be told apart from the load generator's.
type benchServer struct {
	addr net.Addr
	pid  int
	stop func()
}

// startBenchServer starts a gateway on the shards at urls.
func startBenchServer(ctx context.Context, urls []string, conns int, null, process bool, procs int) (*benchServer, error) {
	if !process {
		gw, err := serveGateway(ctx, urls, conns, null)
		if err != nil {
			return nil, err
		}
		return &benchServer{addr: gw.Addr(), stop: func() { gw.Shutdown(context.Background()) }}, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"bench", "gateway", "--conns", fmt.Sprint(conns)}
	for _, url := range urls {
		args = append(args, "--shard", url)
	}
	if null {
		args = append(args, "--null")
	}
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	if procs > 0 {
		cmd.Env = append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", procs))
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() {
		stdin.Close()
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		stop()
		return nil, errors.Join(errors.New("gateway process did not start"), err)
	}
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		stop()
		return nil, err
	}
	return &benchServer{addr: tcp, pid: cmd.Process.Pid, stop: stop}, nil
}
