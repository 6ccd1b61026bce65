/**
 * Lua 5.4 words a type error differently from LuaJIT, the VM Kong runs: `attempt to call a nil value
 * (global 'foo')` where LuaJIT says `attempt to call global 'foo' (a nil value)`. A failed phase's
 * message is reported in LuaJIT's words, so error.log lines read as Kong's do (specs match them).
 */
const TYPE_ERROR =
  /attempt to (index|call|perform arithmetic on|concatenate|compare|get length of) an? ([a-z]+) value \((global|local|field|upvalue|method|constant) '([^'\n]*)'\)/g

/** The message with Lua 5.4's type errors reworded as LuaJIT words them. */
export const luajitWording = (message: string): string =>
  message.replace(TYPE_ERROR, (_m, op: string, type: string, kind: string, name: string) => {
    const article = /^[aeiou]/.test(type) ? 'an' : 'a'
    return `attempt to ${op} ${kind === 'constant' ? 'global' : kind} '${name}' (${article} ${type} value)`
  })
