package python

import (
	"encoding/json"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/stretchr/testify/require"
)

func TestParametersSchema(t *testing.T) {
	h, err := startHost(t, map[string]string{"typed.py": `from enum import Enum
from typing import Annotated, Any, Literal, Optional, Union


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


def scalars(name: str, count: int = 1, ratio: float = 0.5, loud: bool = False, anything=None):
    """Scalars.

    Args:
        name: who to greet,
            on two lines.
        count (int): how many times.
    """


def containers(tags: list[str], table: dict[str, int], pair: tuple[int, str], plain: list = [], raw: dict = None):
    pass


def choices(mode: Literal["fast", "slow"] = "fast", colour: Colour = Colour.RED,
            size: Optional[int] = None, either: Union[int, str] = 0, note: Annotated[str, "a note"] = "",
            any_: Any = None):
    pass


def variadic(first, /, *paths: str, flag: bool, **options):
    pass
`}, Config{})
	require.NoError(t, err)
	tests := []struct {
		name, tool, want string
	}{
		{"scalars, defaults and docstring args", "typed.scalars", `{"type":"object","properties":{
			"name":{"description":"who to greet, on two lines.","type":"string"},
			"count":{"description":"how many times.","type":"integer","default":1},
			"ratio":{"type":"number","default":0.5},
			"loud":{"type":"boolean","default":false},
			"anything":{"default":null}},
			"required":["name"],"additionalProperties":false}`},
		{"containers", "typed.containers", `{"type":"object","properties":{
			"tags":{"type":"array","items":{"type":"string"}},
			"table":{"type":"object","additionalProperties":{"type":"integer"}},
			"pair":{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"minItems":2,"maxItems":2},
			"plain":{"type":"array","default":[]},
			"raw":{"type":["object","null"],"default":null}},
			"required":["tags","table","pair"],"additionalProperties":false}`},
		{"literal, enum, optional, union, annotated", "typed.choices", `{"type":"object","properties":{
			"mode":{"type":"string","enum":["fast","slow"],"default":"fast"},
			"colour":{"type":"string","enum":["red","blue"],"default":"red"},
			"size":{"type":["integer","null"],"default":null},
			"either":{"type":["integer","string"],"default":0},
			"note":{"description":"a note","type":"string","default":""},
			"any_":{"default":null}},
			"additionalProperties":false}`},
		{"*args and **kwargs", "typed.variadic", `{"type":"object","properties":{
			"first":{},
			"paths":{"type":"array","items":{"type":"string"}},
			"flag":{"type":"boolean"}},
			"required":["first","flag"],"additionalProperties":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got, want any
			params := find(t, h, tt.tool).Schema()
			require.NoError(t, json.Unmarshal(params, &got))
			require.NoError(t, json.Unmarshal([]byte(tt.want), &want))
			require.Equal(t, want, got, "parameters %s", params)
		})
	}
}

func TestBindArguments(t *testing.T) {
	h, err := startHost(t, map[string]string{"sig.py": `def variadic(first, /, *paths: str, flag: bool = False, **options):
    return [first, list(paths), flag, options]


def strict(x: int, *, y: int = 2):
    return [x, y]
`}, Config{})
	require.NoError(t, err)
	tests := []struct {
		name, tool, args, want, wantErr string
	}{
		{"positional-only by name", "sig.variadic", `{"first":1}`, `[1,[],false,{}]`, ""},
		{"*args as an array", "sig.variadic", `{"first":1,"paths":["a","b"],"flag":true}`, `[1,["a","b"],true,{}]`, ""},
		{"**kwargs take the rest", "sig.variadic", `{"first":1,"colour":"red"}`, `[1,[],false,{"colour":"red"}]`, ""},
		{"*args not an array", "sig.variadic", `{"first":1,"paths":"a"}`, "", "argument 'paths' must be an array"},
		{"missing positional-only", "sig.variadic", `{"paths":["a"]}`, "", "missing a required argument: 'first'"},
		{"keyword-only default", "sig.strict", `{"x":1}`, `[1,2]`, ""},
		{"unknown keyword", "sig.strict", `{"x":1,"z":3}`, "", "unexpected keyword argument 'z'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := call(t, h, tt.tool, tt.args)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, schemas.CodeInvalidArgs)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			var got, want any
			if err == nil {
				err = json.Unmarshal(res.Return, &got)
			}
			require.NoError(t, err)
			json.Unmarshal([]byte(tt.want), &want)
			require.Equal(t, want, got, "return %s", res.Return)
		})
	}
}
