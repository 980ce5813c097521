package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cmd/apiary/cli"
	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
	"github.com/apiary-net/apiary/datapath/hubble/api/observer"
)

// hubbleDrop asks node's Hubble API for the flow of the drop the monitor
// reported and returns it as `hubble observe` prints it.
func (l *lab) hubbleDrop(node string, msg models.MonitorMessage) (string, error) {
	e := msg.MonitorEvent
	ff := &flow.FlowFilter{Verdict: []flow.Verdict{flow.Verdict_DROPPED},
		SourceIp: []string{e.Source.IP}, DestinationIp: []string{e.Destination.IP}}
	if e.Destination.Port != 0 {
		ff.DestinationPort = []string{strconv.Itoa(int(e.Destination.Port))}
	}
	conn, err := grpc.NewClient("unix://"+dir(node, "hubble.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := observer.NewObserverClient(conn).GetFlows(ctx, &observer.GetFlowsRequest{Number: 1, Whitelist: []*flow.FlowFilter{ff}})
	if err != nil {
		return "", err
	}
	for {
		resp, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("no dropped flow %s -> %s in its Hubble ring", e.Source.IP, e.Destination.IP)
		}
		if err != nil {
			return "", err
		}
		if f := resp.GetFlow(); f != nil {
			return cli.CompactFlow(f), nil
		}
	}
}
