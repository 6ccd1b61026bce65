import { Box, type Key, Text } from 'ink'
import { useEffect, useState } from 'react'
import type { StoredFlow } from '../services/broker-client.js'
import { FLOW_PRESETS } from '../services/store/presets.js'
import { secondsLeft } from './flow-rows.js'
import { fieldError, formFields, formRecord, nextChoice, PRESETS } from './new-flow-form.js'
import { useKeys } from './useKeys.js'
import { splitChunk } from './keys.js'
import { editValue, TextField } from './TextField.js'
import { tint } from './theme.js'
import { useNow } from './useNow.js'
import { useStateRef } from './useStateRef.js'
import type { DashboardBroker, OpenOutcome, PanelProps } from './types.js'

/** Panel 2: store a flow from a preset; fields checked as typed, secrets masked; `o` opens the start URL. */
export function NewFlowPanel({
  active,
  broker,
  openUrl,
  onTyping,
  notify,
}: PanelProps & { readonly broker: DashboardBroker; readonly openUrl: (url: string) => Promise<OpenOutcome> }) {
  const now = useNow(1000)
  const [preset, setPreset] = useState(0)
  const [values, setValues, currentValues] = useStateRef<Record<string, string>>({})
  // 0: the preset, 1..n: the fields, n+1: Store.
  const [focus, setFocus, currentFocus] = useStateRef(0)
  const [stored, setStored] = useState<StoredFlow & { expiresAt: number }>()
  const [opening, setOpening] = useState<OpenOutcome | 'opening'>()
  const [failure, setFailure] = useState<string>()
  const [busy, setBusy] = useState(false)
  const name = PRESETS[preset]!
  const fields = formFields(name, values)
  const errorsOf = (v: Record<string, string>) => formFields(name, v).map((f) => fieldError(f, v[f.field] ?? ''))
  const errors = errorsOf(values)
  const valid = errors.every((e) => e === undefined)
  const typing = active && !stored && focus >= 1 && focus <= fields.length
  useEffect(() => onTyping(typing), [onTyping, typing])

  const submit = () => {
    const now = currentValues()
    if (busy) return notify({ text: 'Storing already…' })
    const missing = formFields(name, now)
      .filter((_f, i) => errorsOf(now)[i] !== undefined)
      .map((f) => f.field)
    if (missing.length) return notify({ text: `Fill in first: ${missing.join(', ')}.`, tone: 'error' })
    setBusy(true)
    setFailure(undefined)
    broker.store(formRecord(name, now)).then(
      (answer) => {
        // The secrets typed leave the form once stored: nothing of them stays to be drawn.
        setValues({})
        setOpening(undefined)
        setStored({ ...answer, expiresAt: Date.now() + answer.expires_in * 1000 })
        setBusy(false)
      },
      (err: Error) => {
        setFailure(err.message)
        setBusy(false)
      },
    )
  }

  const open = (url: string) => {
    setOpening('opening')
    openUrl(url).then(setOpening, (err: Error) => setOpening({ opened: false, message: err.message }))
  }

  const handle = (input: string, key: Key) => {
    const focus = currentFocus()
    const fields = formFields(name, currentValues())
    if (stored) {
      if (input === 'o') open(stored.url)
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
      if (key.leftArrow || key.rightArrow) {
        // A refusal of the last Store was about that preset's record: it goes with it.
        setFailure(undefined)
        setPreset((p) => (p + (key.rightArrow ? 1 : PRESETS.length - 1)) % PRESETS.length)
      }
      if (key.return) setFocus(1)
      if (input === 'o') notify({ text: 'Nothing to open yet: store the flow first (its start URL is opened).' })
      if (input === 'n') notify({ text: 'This is a new flow already: fill in the fields.' })
      return
    }
    if (focus === fields.length + 1) {
      if (key.return) submit()
      else if (input === 'o' || input === 'n') notify({ text: 'Store the flow first (Enter on Store).' })
      return
    }
    if (key.return) return setFocus((f) => f + 1)
    const field = fields[focus - 1]!
    if (field.kind === 'choice') {
      if (key.leftArrow || key.rightArrow)
        setValues((v) => ({ ...v, [field.field]: nextChoice(field, v[field.field] ?? '', key.rightArrow ? 1 : -1) }))
      else if (key.backspace || key.delete) setValues((v) => ({ ...v, [field.field]: '' }))
      else if (input) notify({ text: `${field.field} is a choice: ←→ pick one of its values.` })
      return
    }
    setValues((v) => ({ ...v, [field.field]: editValue(v[field.field] ?? '', input, key) }))
  }
  useKeys((input, key) => splitChunk(input, key).forEach(([i, k]) => handle(i, k)), { isActive: active })

  if (stored) {
    const left = secondsLeft(stored.expiresAt, now)
    return (
      <Box flexDirection="column">
        <Text color={tint('green')} bold>
          Stored ({name}).
        </Text>
        <Text>hash {stored.hash}</Text>
        <Text>start URL {stored.url}</Text>
        <Text>{left > 0 ? `expires in ${left}s` : 'expired'}</Text>
        <Text> </Text>
        {opening === 'opening' ? <Text color={tint('yellow')}>Opening the start URL in your browser…</Text> : null}
        {opening && opening !== 'opening' ? (
          <Box flexDirection="column">
            <Text color={tint(opening.opened ? 'green' : 'yellow')}>{opening.message}</Text>
            {opening.opened ? null : <Text>{`  ${stored.url}`}</Text>}
          </Box>
        ) : null}
        <Text dimColor>o: open the start URL in the browser · n: store another · panel 1 shows it counting down</Text>
      </Box>
    )
  }
  const width = Math.max(...fields.map((f) => f.field.length), 6)
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        <Text color={tint(focus === 0 && active ? 'cyan' : undefined)}>{focus === 0 ? '› ' : '  '}</Text>
        <Text bold>{'preset'.padEnd(width)}</Text> ‹ <Text color={tint('cyan')}>{name}</Text> ›{' '}
        <Text dimColor>{FLOW_PRESETS[name]!.summary}</Text>
      </Text>
      {fields.map((f, i) => (
        <TextField
          key={`${name}.${f.field}`}
          label={f.required ? f.field : `${f.field} (optional)`}
          labelWidth={width + 11}
          value={f.kind === 'choice' ? `‹ ${values[f.field] || 'broker default'} ›` : (values[f.field] ?? '')}
          focused={active && focus === i + 1}
          masked={f.kind === 'secret'}
          error={(values[f.field] ?? '') !== '' || focus > i + 1 ? errors[i] : undefined}
        />
      ))}
      <Text>
        <Text color={tint(focus === fields.length + 1 && active ? 'cyan' : undefined)}>
          {focus === fields.length + 1 ? '› ' : '  '}
        </Text>
        <Text inverse={focus === fields.length + 1} color={tint(valid ? 'green' : 'gray')}>
          {busy ? ' Storing… ' : ' Store '}
        </Text>
        {valid ? '' : <Text dimColor> fill in the required fields first</Text>}
      </Text>
      {failure ? <Text color={tint('red')}>{failure}</Text> : null}
    </Box>
  )
}
