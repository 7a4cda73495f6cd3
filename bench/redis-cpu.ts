import type { Redis } from 'ioredis';

/** CPU ms one Redis server has used since it started (INFO cpu: used_cpu_user + used_cpu_sys). */
export async function redisCpuMs(server: Redis): Promise<number> {
  const info = await server.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)![1]);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
}
