import { Box, type Key, Text } from 'ink'
import { useEffect, useState } from 'react'
import type { StoredFlow } from '../services/broker-client.js'
import { FLOW_PRESETS } from '../services/store/presets.js'
import { fieldError, formFields, formRecord, PRESETS } from './new-flow-form.js'
import { useKeys } from './useKeys.js'
import { splitChunk } from './keys.js'
import { editValue, TextField } from './TextField.js'
import { useStateRef } from './useStateRef.js'
import type { DashboardBroker, PanelProps } from './types.js'

/** Panel 2: store a flow from a preset; fields checked as typed, secrets masked; `o` opens the start URL. */
export function NewFlowPanel({
  active,
  broker,
  openUrl,
  onTyping,
}: PanelProps & { readonly broker: DashboardBroker; readonly openUrl: (url: string) => void }) {
  const [preset, setPreset] = useState(0)
  const [values, setValues, currentValues] = useStateRef<Record<string, string>>({})
  // 0: the preset, 1..n: the fields, n+1: Store.
  const [focus, setFocus, currentFocus] = useStateRef(0)
  const [stored, setStored] = useState<StoredFlow>()
  const [failure, setFailure] = useState<string>()
  const [busy, setBusy] = useState(false)
  const name = PRESETS[preset]!
  const fields = formFields(name)
  const errorsOf = (v: Record<string, string>) => fields.map((f) => fieldError(f, v[f.field] ?? ''))
  const errors = errorsOf(values)
  const valid = errors.every((e) => e === undefined)
  const typing = active && !stored && focus >= 1 && focus <= fields.length
  useEffect(() => onTyping(typing), [onTyping, typing])

  const submit = () => {
    const now = currentValues()
    if (busy || !errorsOf(now).every((e) => e === undefined)) return
    setBusy(true)
    setFailure(undefined)
    broker.store(formRecord(name, now)).then(
      (answer) => {
        setStored(answer)
        setBusy(false)
      },
      (err: Error) => {
        setFailure(err.message)
        setBusy(false)
      },
    )
  }

  const handle = (input: string, key: Key) => {
    const focus = currentFocus()
    if (stored) {
      if (input === 'o') openUrl(stored.url)
      if (input === 'n' || key.escape) {
        setStored(undefined)
        setValues({})
        setFocus(0)
      }
      return
    }
    if (key.upArrow) return setFocus((f) => Math.max(0, f - 1))
    if (key.downArrow) return setFocus((f) => Math.min(fields.length + 1, f + 1))
    if (focus === 0) {
      if (key.leftArrow || key.rightArrow)
        setPreset((p) => (p + (key.rightArrow ? 1 : PRESETS.length - 1)) % PRESETS.length)
      if (key.return) setFocus(1)
      return
    }
    if (focus === fields.length + 1) {
      if (key.return) submit()
      return
    }
    if (key.return) return setFocus((f) => f + 1)
    const field = fields[focus - 1]!.field
    setValues((v) => ({ ...v, [field]: editValue(v[field] ?? '', input, key) }))
  }
  useKeys((input, key) => splitChunk(input, key).forEach(([i, k]) => handle(i, k)), { isActive: active })

  if (stored) {
    return (
      <Box flexDirection="column">
        <Text color="green" bold>
          Stored ({name}).
        </Text>
        <Text>hash {stored.hash}</Text>
        <Text wrap="truncate-end">start URL {stored.url}</Text>
        <Text> </Text>
        <Text dimColor>o: open the start URL in the browser · n: store another · panel 1 shows it counting down</Text>
      </Box>
    )
  }
  const width = Math.max(...fields.map((f) => f.field.length), 6)
  return (
    <Box flexDirection="column">
      <Text>
        <Text color={focus === 0 && active ? 'cyan' : undefined}>{focus === 0 ? '› ' : '  '}</Text>
        <Text bold>{'preset'.padEnd(width)}</Text> ‹ <Text color="cyan">{name}</Text> ›{' '}
        <Text dimColor>{FLOW_PRESETS[name]!.summary}</Text>
      </Text>
      {fields.map((f, i) => (
        <TextField
          key={`${name}.${f.field}`}
          label={f.required ? f.field : `${f.field} (optional)`}
          labelWidth={width + 11}
          value={values[f.field] ?? ''}
          focused={active && focus === i + 1}
          masked={f.kind === 'secret'}
          error={(values[f.field] ?? '') !== '' || focus > i + 1 ? errors[i] : undefined}
        />
      ))}
      <Text>
        <Text color={focus === fields.length + 1 && active ? 'cyan' : undefined}>
          {focus === fields.length + 1 ? '› ' : '  '}
        </Text>
        <Text inverse={focus === fields.length + 1} color={valid ? 'green' : 'gray'}>
          {busy ? ' Storing… ' : ' Store '}
        </Text>
        {valid ? '' : <Text dimColor> fill in the required fields first</Text>}
      </Text>
      {failure ? <Text color="red">{failure}</Text> : null}
    </Box>
  )
}
