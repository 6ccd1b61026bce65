import { render } from 'ink-testing-library'
import { describe, expect, it, vi } from 'vitest'
import { flowEvent, KEY, settle } from '../../test/helpers/ink.js'
import type { FinalAnswer, Hop } from '../services/walk/walker.js'
import type { StepWalker } from './types.js'
import { WalkPanel } from './WalkPanel.js'

/** A chain of three hops, served one per next(). */
class ScriptedWalker implements StepWalker {
  stopped?: { reason: 'done' | 'http_error'; message: string }
  final?: FinalAnswer
  /** The answer that ends the chain. */
  answer: FinalAnswer = {
    status: 200,
    statusText: 'OK',
    contentType: 'application/json',
    body: JSON.stringify({
      access_token: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl',
      token_type: 'Bearer',
    }),
  }
  private readonly hops: Hop[]
  constructor(readonly start: string) {
    this.hops = [
      {
        n: 1,
        method: 'GET',
        url: start,
        status: 302,
        location: 'https://idp.example/authorize?client_id=cid&state=st4te',
        params: {},
        cookies: ['broker_abc'],
      },
      {
        n: 2,
        method: 'GET',
        url: 'https://idp.example/authorize?client_id=cid&state=st4te',
        status: 302,
        location: 'http://localhost:3000/callback?code=Spl…SbIA',
        params: { client_id: 'cid', state: 'st4te' },
        cookies: [],
      },
      {
        n: 3,
        method: 'GET',
        url: 'http://localhost:3000/callback?code=Spl…SbIA',
        status: 200,
        params: { code: 'Spl…SbIA' },
        cookies: [],
      },
    ]
  }
  get pending() {
    return this.stopped ? undefined : this.hops[0]?.url
  }
  async next() {
    const hop = this.hops.shift()
    if (!this.hops.length) {
      this.final = this.answer
      this.stopped =
        this.answer.status >= 400
          ? { reason: 'http_error', message: `the chain ended in an error: ${this.answer.status}` }
          : { reason: 'done', message: 'the final answer: 200 OK' }
    }
    return hop
  }
}

const broker = { url: 'http://localhost:3000', store: vi.fn(), hashCheck: vi.fn() }
const panel = { active: true, height: 30, width: 100, onTyping: () => {}, notify: vi.fn() }

describe('WalkPanel', () => {
  it('walks a picked flow one hop per Enter, with the decoded OAuth parameters', async () => {
    const walker = vi.fn((url: string) => new ScriptedWalker(url))
    const flows = [flowEvent({ hash: 'PickMe00000000000000000000000000' })]
    const { lastFrame, stdin } = render(<WalkPanel {...panel} flows={flows} broker={broker} walker={walker} />)
    expect(lastFrame()).toContain('PickMe00')
    stdin.write(KEY.enter)
    await settle()
    expect(walker).toHaveBeenCalledWith('http://localhost:3000/start?hash=PickMe00000000000000000000000000')
    expect(lastFrame()).toContain('0 hops')
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toMatch(/#1\s+GET http:\/\/localhost:3000\/start\S*\s+→ 302/))
    expect(lastFrame()).not.toContain('#2')
    expect(lastFrame()).toContain('Set-Cookie: broker_abc')
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toContain('#2'))
    expect(lastFrame()).toMatch(/client_id\s+cid/)
    expect(lastFrame()).toMatch(/state\s+st4te/)
    expect(lastFrame()).not.toContain('#3')
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toContain('Ended: the final answer: 200 OK'))
    // The answer's JSON body is shown pretty-printed, its token shortened.
    expect(lastFrame()).toMatch(/answer 200 OK \(application\/json\)/)
    expect(lastFrame()).toMatch(/\|\s+"access_token": "eyJh…dXJl"/)
    expect(lastFrame()).toMatch(/\|\s+"token_type": "Bearer"/)
    expect(lastFrame()).not.toContain('c2lnbmF0dXJl')
    stdin.write(KEY.escape)
    await vi.waitFor(() => expect(lastFrame()).toContain('Flows (1)'))
  })

  it('walks a pasted URL and refuses what is not one', async () => {
    const walker = vi.fn((url: string) => new ScriptedWalker(url))
    const onTyping = vi.fn()
    const { lastFrame, stdin } = render(
      <WalkPanel {...panel} onTyping={onTyping} flows={[]} broker={broker} walker={walker} />,
    )
    await settle()
    expect(lastFrame()).toContain('u: paste a start URL')
    stdin.write('u')
    await vi.waitFor(() => expect(onTyping).toHaveBeenLastCalledWith(true))
    stdin.write('ftp:/x')
    await settle()
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toContain('Not an http(s) URL'))
    for (let i = 0; i < 6; i++) stdin.write(KEY.backspace)
    await settle()
    stdin.write('http://127.0.0.1:9/start')
    await settle()
    stdin.write(KEY.enter)
    await settle()
    expect(walker).toHaveBeenCalledWith('http://127.0.0.1:9/start')
  })

  it('keeps the selected flow selected when a new one arrives above it', async () => {
    const walker = vi.fn((url: string) => new ScriptedWalker(url))
    const older = [
      flowEvent({ hash: 'Second00000000000000000000000000' }),
      flowEvent({ hash: 'First000000000000000000000000000' }),
    ]
    const { lastFrame, stdin, rerender } = render(
      <WalkPanel {...panel} flows={older} broker={broker} walker={walker} />,
    )
    stdin.write(KEY.down)
    await vi.waitFor(() => expect(lastFrame()).toMatch(/› First000/))
    const newer = [flowEvent({ hash: 'Newest00000000000000000000000000' }), ...older]
    rerender(<WalkPanel {...panel} flows={newer} broker={broker} walker={walker} />)
    await vi.waitFor(() => expect(lastFrame()).toContain('Newest00'))
    expect(lastFrame()).toMatch(/› First000/)
    stdin.write(KEY.enter)
    await settle()
    expect(walker).toHaveBeenCalledWith('http://localhost:3000/start?hash=First000000000000000000000000000')
  })

  it('shows an error answer that ends the chain, its JSON body whole', async () => {
    const walker = vi.fn((url: string) => {
      const w = new ScriptedWalker(url)
      w.answer = {
        status: 409,
        statusText: 'Conflict',
        contentType: 'application/json; charset=utf-8',
        body: '{"code":"FLOW_STARTED","message":"This flow was started already; its start URL works once."}',
      }
      return w
    })
    const { lastFrame, stdin } = render(<WalkPanel {...panel} flows={[flowEvent()]} broker={broker} walker={walker} />)
    for (let i = 0; i < 4; i++) {
      stdin.write(KEY.enter)
      await settle()
    }
    await vi.waitFor(() => expect(lastFrame()).toContain('Ended: the chain ended in an error: 409'))
    expect(lastFrame()).toMatch(/answer 409 Conflict \(application\/json\)/)
    expect(lastFrame()).toMatch(/"code": "FLOW_STARTED"/)
  })

  it("leaves a walk left mid-hop behind: its late failure is not the next walk's", async () => {
    let fail: (err: Error) => void = () => {}
    const first: StepWalker = {
      pending: 'http://127.0.0.1:9/slow',
      next: () => new Promise((_r, reject) => (fail = reject)),
    }
    const walker = vi.fn((url: string) => (walker.mock.calls.length === 1 ? first : new ScriptedWalker(url)))
    const { lastFrame, stdin } = render(<WalkPanel {...panel} flows={[flowEvent()]} broker={broker} walker={walker} />)
    for (const key of [KEY.enter, KEY.enter]) {
      stdin.write(key)
      await settle()
    }
    await vi.waitFor(() => expect(lastFrame()).toContain('requesting…'))
    stdin.write(KEY.escape)
    await vi.waitFor(() => expect(lastFrame()).toContain('Flows (1)'))
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toContain('press Enter to follow'))
    fail(new Error('connect ECONNREFUSED'))
    await settle()
    expect(lastFrame()).not.toContain('ECONNREFUSED')
    // And the new walk steps on.
    stdin.write(KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toMatch(/#1\s+GET/))
  })
})
