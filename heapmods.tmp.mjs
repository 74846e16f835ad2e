await import('./dist/src/cli/main.js').catch((e) => console.log('main err', e.message))
