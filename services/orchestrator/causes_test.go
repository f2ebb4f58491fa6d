package orchestrator

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

func TestWireErrorKeepsTheCause(t *testing.T) {
	errEngine := errors.New("engine said no")
	t.Run("a wire error passes through", func(t *testing.T) {
		err := fmt.Errorf("create sb-1: %w", schemas.Errorf(schemas.CodeNotFound, "group g: %w", errEngine))
		we := wire.Error(err)
		assert.Equal(t, schemas.CodeNotFound, we.Code)
		assert.ErrorIs(t, we, schemas.CodeNotFound, "the class")
		assert.ErrorIs(t, we, errEngine, "the cause")
	})
	t.Run("a runtime's not-found is internal on the wire", func(t *testing.T) {
		// runtime.ErrNotFound is schemas.CodeNotFound in process; on the
		// wire not_found says a group or sandbox does not exist, which a
		// missing container is not.
		err := fmt.Errorf("inspect sandox-sb-1: %w", runtime.ErrNotFound)
		assert.ErrorIs(t, err, schemas.CodeNotFound, "one class in process")
		we := wire.Error(err)
		assert.Equal(t, schemas.CodeInternal, we.Code)
		assert.Equal(t, "inspect sandox-sb-1: not found", we.Message)
		assert.ErrorIs(t, we, runtime.ErrNotFound, "the cause")
	})
	t.Run("any other error is internal and kept", func(t *testing.T) {
		we := wire.Error(fmt.Errorf("inspect: %w", errEngine))
		assert.Equal(t, schemas.CodeInternal, we.Code)
		assert.Equal(t, "inspect: engine said no", we.Message)
		assert.ErrorIs(t, we, schemas.CodeInternal, "the class")
		assert.ErrorIs(t, we, errEngine, "the cause")
	})
}
