/** Parses a response body as JSON for assertions (typed loosely on purpose: tests check shapes field by field). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function json(res: Response): Promise<any> {
  return res.json();
}
