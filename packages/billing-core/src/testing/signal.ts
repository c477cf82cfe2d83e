/** A promise and the function that resolves it: a test's "it got here" signal, or the gate it waits at. */
export interface Signal {
  readonly promise: Promise<void>;
  readonly resolve: () => void;
}

export function signal(): Signal {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}
