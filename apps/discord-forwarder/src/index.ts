export { runDiscordForwarder } from './run.js';
