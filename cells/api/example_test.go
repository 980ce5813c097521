package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/hive"
)

// greeter is a cell that adds GET /v1/greeting/{name} to the API.
var greeter = cell.Module("greeter", "Greets",
	cell.Provide(func() api.HandlerOut {
		return api.NewHandlerOut(http.MethodGet, "/v1/greeting/{name}", func(w http.ResponseWriter, r *http.Request) {
			api.WriteJSON(w, http.StatusOK, map[string]string{"greeting": "hello " + r.PathValue("name")})
		})
	}),
)

func ExampleNewHandlerOut() {
	dir, _ := os.MkdirTemp("", "apiary-example")
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "apiary.sock")

	h := hive.NewWithOptions(hive.Options{Logger: slog.New(slog.DiscardHandler)}, api.Cell, greeter)
	_ = h.Flags().Set("socket-path", socket)
	if err := h.Start(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	defer h.Stop(context.Background())

	c := client.New(socket)
	defer c.Close()
	var out map[string]string
	if _, err := c.Get(context.Background(), "/v1/greeting/bee", &out); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out["greeting"])
	_, err := c.GetRaw(context.Background(), "/v1/greeting")
	fmt.Println(err)
	// Output:
	// hello bee
	// GET /v1/greeting: 404 Not Found: no API endpoint GET /v1/greeting
}
