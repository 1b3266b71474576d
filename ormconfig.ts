import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadDatabaseConfig } from './src/platform/config/database.config';
import { ENTITIES } from './src/app.module';
import { buildDataSourceOptions } from './src/platform/database/data-source-options';

/** The DataSource of the TypeORM CLI (npm run migration:*); the app builds its own from the same options. */
export default new DataSource(buildDataSourceOptions(loadDatabaseConfig(), ENTITIES));
