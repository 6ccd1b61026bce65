import { Box, Text } from 'ink'
import { answerLines, type ShownAnswer } from '../services/walk/answer.js'
import { tint } from './theme.js'

/** The answer that ended a walk, as `broker walk` prints it: status, then the body (at most `height` lines). */
export function AnswerView({ answer, height }: { readonly answer: ShownAnswer; readonly height: number }) {
  const [head, ...body] = answerLines(answer)
  const room = Math.max(1, height - 1)
  const shown = body.length > room ? [...body.slice(0, room - 1), `… (${body.length - room + 1} more lines)`] : body
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end" color={tint(answer.status >= 400 ? 'red' : 'green')}>
        {'    '}
        {head}
      </Text>
      {shown.map((line, i) => (
        <Text key={i} wrap="truncate-end">
          {'    | '}
          {line}
        </Text>
      ))}
    </Box>
  )
}
